import { describe, expect, it } from "vitest";
import { checkSampleJudgement } from "../run-folder/index.js";
import { majorityOf } from "./majority.js";
import { parseVerdict } from "./parse-verdict.js";

describe("parseVerdict", () => {
  it("takes the object from a bare reply, a ```json fence, or prose around it", () => {
    const o = { class: "implementation-error", rationale: " The sign of the reward is flipped. " };
    expect(parseVerdict(JSON.stringify(o))).toEqual({ ok: true, class: "implementation-error", rationale: "The sign of the reward is flipped." });
    expect(parseVerdict("```json\n" + JSON.stringify(o) + "\n```")).toMatchObject({ ok: true, class: "implementation-error" });
    expect(parseVerdict(`My verdict: ${JSON.stringify({ ...o, class: "fully-correct" })} — done.`)).toMatchObject({ ok: true, class: "fully-correct" });
  });

  it("names why a reply does not parse: empty, no object, broken JSON, a class outside the schema, a missing or extra field", () => {
    expect(parseVerdict("  ")).toEqual({ ok: false, reason: "the reply is empty" });
    expect(parseVerdict("It is correct.")).toMatchObject({ ok: false, reason: expect.stringMatching(/holds no JSON object/) });
    expect(parseVerdict('{"class": "fully-correct", "rationale": "x"')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/holds no JSON object|does not parse/),
    });
    expect(parseVerdict('{"class": fully-correct}')).toMatchObject({ ok: false, reason: expect.stringMatching(/does not parse/) });
    expect(parseVerdict('{"class": "mostly-right", "rationale": "x"}')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/\/class must be equal to one of the allowed values \(\["incorrect-logic","implementation-error","fully-correct"\]\)/),
    });
    expect(parseVerdict('{"class": "fully-correct"}')).toMatchObject({ ok: false, reason: expect.stringMatching(/must have required property 'rationale'/) });
    expect(parseVerdict('{"class": "fully-correct", "rationale": "x", "score": 3}')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/must NOT have additional properties \(score\)/),
    });
    expect(parseVerdict('{"class": "fully-correct", "rationale": ""}')).toMatchObject({ ok: false });
  });
});

describe("majorityOf", () => {
  it("gives the most frequent class and its share; a tie goes to the worse class", () => {
    expect(majorityOf(["fully-correct", "implementation-error", "fully-correct"])).toEqual({ majority: "fully-correct", agreement: 2 / 3 });
    expect(majorityOf(["fully-correct", "incorrect-logic"])).toEqual({ majority: "incorrect-logic", agreement: 0.5 });
    expect(majorityOf(["implementation-error", "fully-correct", "incorrect-logic"])).toEqual({ majority: "incorrect-logic", agreement: 1 / 3 });
    expect(majorityOf(["fully-correct"])).toEqual({ majority: "fully-correct", agreement: 1 });
    expect(majorityOf([])).toBeUndefined();
  });
});

describe("checkSampleJudgement", () => {
  const key = { task_id: "t", model: "m", sample: "0" };
  const good = {
    schema_version: 1,
    ...key,
    judge_model: "j",
    submission_hash: "h",
    judge_key: "k",
    status: "judged",
    votes: [{ vote: 0, class: "fully-correct", rationale: "r", cached: false, requests: 1, parse_failures: 0 }],
    majority: "fully-correct",
    agreement: 1,
    requests: 1,
    parse_failures: 0,
    infra_votes: 0,
    usage: { prompt_tokens: 1, completion_tokens: 1 },
  };
  it("accepts what lmr judge writes and names the field of a broken one", () => {
    expect(checkSampleJudgement(good, key)).toBeUndefined();
    expect(checkSampleJudgement({ ...good, sample: "1" }, key)).toMatchObject({ pointer: "/sample" });
    expect(checkSampleJudgement({ ...good, majority: "great" }, key)).toMatchObject({ pointer: "/majority" });
    expect(checkSampleJudgement({ ...good, status: "infra" }, key)).toMatchObject({ pointer: "/majority", message: "must be null unless status is judged" });
    expect(checkSampleJudgement({ ...good, votes: [{ vote: 0 }] }, key)).toMatchObject({
      pointer: "/votes/0",
      message: "a vote without a class needs an error",
    });
    expect(checkSampleJudgement({ ...good, agreement: 0 }, key)).toMatchObject({ pointer: "/agreement" });
    expect(checkSampleJudgement({ ...good, schema_version: 2 }, key)).toMatchObject({ pointer: "/schema_version" });
  });
});
