import { sha256 } from "../core/hash.js";

export interface RepoRef {
  /** The URL as written in the manifest. */
  url: string;
  /** Host name ("github.com"), or "local" for file:// URLs. */
  host: string;
  /** Owner (for nested groups, the segments joined with "+"). */
  owner: string;
  /** Repository name without ".git". */
  name: string;
  /** True for github.com repositories, the only ones a mirror can serve. */
  github: boolean;
}

/**
 * Split a git URL into host/owner/name. Accepts https://, http://, ssh://,
 * git://, scp-like `git@host:owner/name.git` and file:// URLs; undefined for
 * anything else.
 */
export function parseRepoUrl(url: string): RepoRef | undefined {
  const scp = /^[\w.-]+@([\w.-]+):(?!\/\/)(.+)$/.exec(url);
  let host: string;
  let path: string;
  if (scp) {
    host = scp[1]!;
    path = scp[2]!;
  } else {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    if (u.protocol === "file:") {
      const segs = splitPath(decodeURIComponent(u.pathname));
      const name = segs[segs.length - 1];
      if (!name) return undefined;
      // Local URLs can share a name; the hash of the full path keeps their caches apart.
      return { url, host: "local", owner: sha256(u.pathname).slice(0, 12), name, github: false };
    }
    if (!["https:", "http:", "ssh:", "git:"].includes(u.protocol) || u.hostname === "") return undefined;
    host = u.hostname.toLowerCase();
    path = decodeURIComponent(u.pathname);
  }
  const segs = splitPath(path);
  if (segs.length < 2) return undefined;
  const name = segs[segs.length - 1]!;
  const owner = segs.slice(0, -1).join("+");
  return { url, host: host.toLowerCase(), owner, name, github: host.toLowerCase() === "github.com" && segs.length === 2 };
}

function splitPath(p: string): string[] {
  const segs = p.split("/").filter((s) => s !== "");
  const last = segs.length - 1;
  if (last >= 0) segs[last] = segs[last]!.replace(/\.git$/, "");
  return segs.filter((s) => s !== "");
}

/** A path segment safe on every file system we care about. */
export function safeSegment(s: string): string {
  const cleaned = s.replace(/[^A-Za-z0-9._+-]/g, "_");
  return cleaned === "" || cleaned === "." || cleaned === ".." ? "_" : cleaned;
}
