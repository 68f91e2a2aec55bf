import { homedir } from "node:os";
import { join } from "node:path";

/**
 * An interpreter with Hugging Face's `datasets` (and huggingface_hub, PyYAML) and inspect-ai:
 * $LMR_HARNESS_PYTHON, else the venv docs/harnesses.md makes
 * (python3.11 -m venv ~/.cache/lmr-harness-venvs/py311).
 */
export const HARNESS_PYTHON = process.env.LMR_HARNESS_PYTHON ?? join(homedir(), ".cache", "lmr-harness-venvs", "py311", "bin", "python");
