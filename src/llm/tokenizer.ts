/**
 * Token counts with a real BPE tokenizer: gpt-tokenizer's o200k_base (the
 * encoding of GPT-4o and later). Other model families tokenize differently,
 * so a budget is an estimate for them; o200k is the closest public encoding
 * for current chat models. Loaded on first use (~1 s): commands that never
 * count tokens never pay for it.
 */
interface Encoding {
  encode(text: string): number[];
  decode(tokens: number[]): string;
}

let loading: Promise<Encoding> | undefined;

export const TOKENIZER_NAME = "gpt-tokenizer o200k_base";

async function loadEncoding(): Promise<Encoding> {
  loading ??= import("gpt-tokenizer/encoding/o200k_base").then((m) => ({
    encode: (t: string) => m.encode(t, { allowedSpecial: new Set(), disallowedSpecial: new Set() }),
    decode: (t: number[]) => m.decode(t),
  }));
  return loading;
}

/** Tokens in `text` (special-token strings count as plain text: prompts hold arbitrary code). */
export async function countTokens(text: string): Promise<number> {
  return (await loadEncoding()).encode(text).length;
}

/** At most `max` tokens of `text`, cut at a token boundary. */
export async function truncateToTokens(text: string, max: number): Promise<string> {
  const enc = await loadEncoding();
  const tokens = enc.encode(text);
  return tokens.length <= max ? text : enc.decode(tokens.slice(0, Math.max(0, max)));
}
