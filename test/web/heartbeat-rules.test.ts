import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  exitCodesText,
  parseExitCodes,
  parsePercent,
  percentText,
  readRunRules,
  runRuleErrors,
  runRuleValuesOf,
  type RunRuleValues,
} from '../../control-plane/src/web/heartbeat-rules.ts';
import type { Heartbeat } from '../../control-plane/src/heartbeats/schemas.ts';

describe("the heartbeat form's run rules", () => {
  const codes: [input: string, expected: ReturnType<typeof parseExitCodes>][] = [
    ['0', { codes: [0] }],
    ['0, 3', { codes: [0, 3] }],
    ['0 3,,4', { codes: [0, 3, 4] }],
    ['3-5, 0', { codes: [3, 4, 5, 0] }],
    ['0-2, 1', { codes: [0, 1, 2] }],
    ['255', { codes: [255] }],
    ['256', { problem: '“256” is not an exit code: use whole numbers from 0 to 255, or ranges such as 3-5.' }],
    ['0, -1', { problem: '“-1” is not an exit code: use whole numbers from 0 to 255, or ranges such as 3-5.' }],
    ['1.5', { problem: '“1.5” is not an exit code: use whole numbers from 0 to 255, or ranges such as 3-5.' }],
    ['ok', { problem: '“ok” is not an exit code: use whole numbers from 0 to 255, or ranges such as 3-5.' }],
    ['5-3', { problem: '“5-3”: a range goes from the lower code to the higher one.' }],
    [' , ', { problem: 'List at least one exit code.' }],
  ];
  for (const [input, expected] of codes) {
    it(`reads the exit codes ${JSON.stringify(input)}`, () => assert.deepEqual(parseExitCodes(input), expected));
  }

  const texts: [codes: number[], text: string][] = [
    [[0], '0'],
    [[0, 1], '0, 1'],
    [[0, 3, 4, 5], '0, 3-5'],
    [[5, 0, 1, 2], '5, 0-2'],
    [[1, 3, 5], '1, 3, 5'],
  ];
  for (const [list, text] of texts) {
    it(`writes the exit codes ${list.join(' ')} as "${text}", which reads back as they were`, () => {
      assert.equal(exitCodesText(list), text);
      assert.deepEqual(parseExitCodes(text), { codes: list });
    });
  }

  const percents: [input: string, ratio: number | undefined][] = [
    ['50', 0.5],
    ['100', 1],
    ['12.5', 0.125],
    ['0', undefined],
    ['101', undefined],
    ['-5', undefined],
    ['half', undefined],
    ['0.5', 0.005],
  ];
  for (const [input, ratio] of percents) {
    it(`reads the percentage "${input}"`, () => assert.equal(parsePercent(input), ratio));
  }
  it('shows a fraction as a percentage without float noise', () => {
    assert.equal(percentText(0.07), '7');
    assert.equal(percentText(0.5), '50');
    assert.equal(percentText(0.125), '12.5');
  });

  const empty: RunRuleValues = { maxDuration: '', minDuration: '', tooFrequent: '', alertAfter: '', exitCodes: '', outputRules: [] };

  it('sends empty fields as no limit and the defaults', () => {
    assert.deepEqual(readRunRules(empty), {
      body: {
        max_duration: null,
        min_duration: null,
        too_frequent_ratio: null,
        alert_after_failures: 1,
        success_exit_codes: [0],
        output_rules: [],
      },
      problems: {},
      rows: [],
    });
  });

  it('leaves empty output rule rows out and remembers the row of each rule sent', () => {
    const read = readRunRules({
      ...empty,
      outputRules: [
        { match: 'contains', value: '', outcome: 'fail' },
        { match: 'regex', value: 'ERROR \\d+', outcome: 'fail' },
        { match: 'contains', value: '', outcome: 'success' },
        { match: 'contains', value: ' expected ', outcome: 'success' },
      ],
    });
    assert.deepEqual(read.body['output_rules'], [
      { match: 'regex', value: 'ERROR \\d+', outcome: 'fail' },
      { match: 'contains', value: ' expected ', outcome: 'success' },
    ]);
    assert.deepEqual(read.rows, [1, 3]);
  });

  it('names the fields it cannot read itself', () => {
    const read = readRunRules({ ...empty, tooFrequent: '150', exitCodes: '0, x' });
    assert.deepEqual(read.problems, {
      too_frequent_percent: ['Enter a percentage above 0 and at most 100, such as 50.'],
      success_exit_codes: ['“x” is not an exit code: use whole numbers from 0 to 255, or ranges such as 3-5.'],
    });
  });

  it('sends the stored too-frequent ratio and exit codes of an edit left as shown, exactly', () => {
    const stored = {
      too_frequent_ratio: 1 / 3,
      success_exit_codes: [3, 0],
      output_rules: [],
      alert_after_failures: 1,
    } as unknown as Heartbeat;
    const shown = runRuleValuesOf(stored);
    assert.equal(shown.tooFrequent, '33.3333333333');
    assert.equal(shown.exitCodes, '3, 0');
    const read = readRunRules(shown, stored);
    assert.equal(read.body['too_frequent_ratio'], 1 / 3);
    assert.deepEqual(read.body['success_exit_codes'], [3, 0]);
    assert.equal(readRunRules({ ...shown, tooFrequent: '25' }, stored).body['too_frequent_ratio'], 0.25);
  });

  it("puts the API's errors under the form's fields and rows", () => {
    assert.deepEqual(
      runRuleErrors(
        {
          'output_rules.1.value': ['Not a valid pattern'],
          output_rules: ['The output_rules field must not have more than 20 items.'],
          too_frequent_ratio: ['The too_frequent_ratio field must not be greater than 1.'],
          'success_exit_codes.0': ['The success_exit_codes.0 field must not be greater than 255.'],
          min_duration: ['The min_duration field must be less than max_duration (300 seconds).'],
          name: ['The name field is required.'],
        },
        [0, 4],
      ),
      {
        'output_rules.4.value': ['Not a valid pattern'],
        output_rules: ['The output_rules field must not have more than 20 items.'],
        too_frequent_percent: ['The too_frequent_ratio field must not be greater than 1.'],
        success_exit_codes: ['The success_exit_codes.0 field must not be greater than 255.'],
        min_duration: ['The min_duration field must be less than the max duration (300 seconds).'],
        name: ['The name field is required.'],
      },
    );
  });
});
