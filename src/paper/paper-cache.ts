import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readFile, rename, stat } from "node:fs/promises";
import { join } from "node:path";
import { copyFileAtomic, writeJsonAtomic } from "../core/fs-atomic.js";
import { sha256 } from "../core/hash.js";
import { defaultCacheDir } from "../source/cache.js";

/*
 * The paper cache: $LMR_CACHE/papers/<sha256>.pdf, one file per PDF, named by
 * its content so a file in place is always complete and right. Papers whose
 * manifest does not pin the hash yet are found through a small record per pin,
 * papers/by-pin/<sha256 of the pin key>.json, written after the PDF.
 */

export interface PinRecord {
  /** "arxiv:<id with version>" or the pdf_url (see PaperSource.key). */
  key: string;
  sha256: string;
  bytes: number;
  /** The address it was downloaded from, or the file it was copied from. */
  from: string;
}

export function papersCacheDir(cacheDir?: string): string {
  return join(cacheDir ?? defaultCacheDir(), "papers");
}

export function cachedPdfPath(papersDir: string, sha: string): string {
  return join(papersDir, `${sha}.pdf`);
}

function pinRecordPath(papersDir: string, key: string): string {
  return join(papersDir, "by-pin", `${sha256(key)}.json`);
}

/** sha256 and size of a file, streamed (PDFs can be tens of MB). */
export async function hashFileStream(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest("hex"), bytes };
}

export async function fileSize(path: string): Promise<number | undefined> {
  const s = await stat(path).catch(() => undefined);
  return s?.isFile() ? s.size : undefined;
}

/** The cached PDF recorded for an unhashed pin, if both the record and the file are there. */
export async function readPinRecord(papersDir: string, key: string): Promise<PinRecord | undefined> {
  try {
    const rec = JSON.parse(await readFile(pinRecordPath(papersDir, key), "utf8")) as PinRecord;
    if (rec.key !== key || !/^[0-9a-f]{64}$/.test(rec.sha256)) return undefined;
    return (await fileSize(cachedPdfPath(papersDir, rec.sha256))) === rec.bytes ? rec : undefined;
  } catch {
    return undefined;
  }
}

export async function writePinRecord(papersDir: string, rec: PinRecord): Promise<void> {
  await writeJsonAtomic(pinRecordPath(papersDir, rec.key), rec);
}

/** Moves a complete, checked file into the cache under its hash (same file system: one rename). */
export async function moveIntoCache(papersDir: string, file: string, sha: string): Promise<string> {
  const to = cachedPdfPath(papersDir, sha);
  await rename(file, to);
  return to;
}

/** Copies a file into the cache under its hash: through a temp file, so a reader never sees half of it. */
export async function copyIntoCache(papersDir: string, file: string, sha: string): Promise<string> {
  const to = cachedPdfPath(papersDir, sha);
  if ((await fileSize(to)) !== undefined) return to;
  await mkdir(papersDir, { recursive: true });
  await copyFileAtomic(file, to);
  return to;
}
