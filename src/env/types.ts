/** The image a docker run used: its tag, its id (sha256 of its config) and a registry digest where it has one. */
export interface ImageRecord {
  tag: string;
  id: string;
  /** repo@sha256:… from a registry; null for images built or imported on this machine. */
  digest: string | null;
}

/** An interpreter a run uses: `path` is the real executable (sys.executable), not a shim. */
export interface PythonEnv {
  path: string;
  version: string;
  /** sys.prefix / sys.base_prefix: folders the sandbox must keep visible. */
  prefixes?: string[];
  /** The interpreter lives in this task image (docker): anything run with it runs there. */
  image?: ImageRecord & { gpu: boolean };
}
