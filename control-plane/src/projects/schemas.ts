import { z } from 'zod';

export const ProjectSummary = z
  .object({ id: z.uuid(), name: z.string(), description: z.string() })
  .meta({ id: 'ProjectSummary', description: 'The project a resource belongs to.' });
export type ProjectSummary = z.infer<typeof ProjectSummary>;

export const Project = z
  .object({
    id: z.uuid(),
    organization_id: z.uuid(),
    name: z.string(),
    description: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Project' });
export type Project = z.infer<typeof Project>;

export const ProjectCreateBody = z.object({
  organization_id: z.uuid().optional().describe('Default: the first organization the caller owns, else the first they belong to.'),
  name: z.string().trim().min(1).max(255),
  description: z.string().max(1000).default(''),
});

export const ProjectUpdateBody = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  description: z.string().max(1000).optional(),
});

export const Organization = z
  .object({
    id: z.uuid(),
    name: z.string(),
    role: z.enum(['owner', 'member']).describe("The caller's role in it."),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Organization' });
export type Organization = z.infer<typeof Organization>;
