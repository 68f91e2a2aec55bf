import { escapeHtml as esc, formatRate, truncate } from "./format.js";
import type { CategorySummary } from "./types.js";

const WIDTH = 720;
const LABEL_H = 18;
const BAR_H = 16;
const ROW_H = LABEL_H + BAR_H + 14;
const VALUE_W = 140;
const BAR_W = WIDTH - VALUE_W;

/**
 * A horizontal bar chart of pass rate per category, as inline SVG. Colours come
 * from the page's CSS classes so the chart follows the light/dark theme.
 */
export function renderCategoryChart(categories: CategorySummary[]): string {
  const height = Math.max(ROW_H * categories.length, ROW_H) + 4;
  const rows = categories.map((c, i) => renderRow(c, i * ROW_H)).join("\n");
  const label = `Pass rate per category: ${categories.map((c) => `${c.category} ${formatRate(c.pass_rate)}`).join("; ")}`;
  return [
    `<svg class="chart" viewBox="0 0 ${WIDTH} ${height}" width="100%" role="img" aria-label="${esc(label)}" preserveAspectRatio="xMinYMin meet">`,
    rows || `<text class="chart-label" x="0" y="${LABEL_H}">No results.</text>`,
    "</svg>",
  ].join("\n");
}

function renderRow(c: CategorySummary, y: number): string {
  const rate = c.pass_rate ?? 0;
  const fill = Math.round(BAR_W * Math.min(1, Math.max(0, rate)) * 10) / 10;
  const barY = y + LABEL_H + 4;
  const tasks = `${c.scored_tasks} task${c.scored_tasks === 1 ? "" : "s"}`;
  const value = c.pass_rate === null ? "n/a" : `${formatRate(c.pass_rate)} · ${tasks}`;
  return [
    `<g>`,
    `<title>${esc(`${c.category}: ${formatRate(c.pass_rate)} mean pass@1 over ${tasks}; ${c.passed} of ${c.samples} samples passed`)}</title>`,
    `<text class="chart-label" x="0" y="${y + LABEL_H - 4}">${esc(truncate(c.category, 90))}</text>`,
    `<rect class="chart-track" x="0" y="${barY}" width="${BAR_W}" height="${BAR_H}" rx="3"/>`,
    fill > 0 ? `<rect class="chart-bar" x="0" y="${barY}" width="${fill}" height="${BAR_H}" rx="3"/>` : "",
    `<text class="chart-value" x="${BAR_W + 8}" y="${barY + BAR_H - 3}">${esc(value)}</text>`,
    `</g>`,
  ]
    .filter((s) => s !== "")
    .join("");
}
