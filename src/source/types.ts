export interface SourceOptions {
  /** Clone cache (default $LMR_CACHE or ~/.cache/lmr). */
  cacheDir?: string;
  /** Local mirror of github.com/OWNER/NAME repositories (default $LMR_MIRROR). */
  mirror?: string;
}

export interface MaterializedSource {
  /** Full commit SHA the tree was taken from (undefined for a plain local folder). */
  commit?: string;
  /** Where it came from. */
  origin: "clone" | "cache" | "mirror" | "path";
  /** The URL or path that was used. */
  location: string;
}
