import { z } from 'zod';

export const RegionView = z
  .object({
    region: z.string(),
    state: z.enum(['healthy', 'degraded']).describe('A degraded region abstains: its results are kept but do not vote.'),
    reason: z
      .enum(['silent', 'canaries', 'disagreement'])
      .nullable()
      .describe(
        'Why it is degraded: silent (no live agent), canaries (its agents cannot reach their canaries), disagreement (most of its monitors fail there while other regions see them up). Null when healthy.',
      ),
    since: z.string().describe('When the current state began.'),
    agents: z.number().int().describe('Live agents.'),
    canary_agents: z.number().int().describe('Live agents that check canaries.'),
    canary_agents_failing: z.number().int().describe('Of those, the ones that cannot reach most of their canaries.'),
    compared: z.number().int().describe('Monitors with a fresh result here and in another region.'),
    disagreeing: z.number().int().describe('Of those, the ones failing here while most other regions see them up.'),
    updated_at: z.string(),
  })
  .meta({ id: 'Region' });
export type RegionView = z.infer<typeof RegionView>;
