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
  /** The git directory the tree was read from (cache entry, mirror or local repo). */
  gitDir?: string;
  /** True when a cached clone lacked the commit and was fetched into. */
  fetched?: boolean;
  /** Files of the commit whose content the object store lacks (mirror snapshots omit large blobs); not written. */
  missing?: string[];
}
