/** Inline CSS for the HTML report: system fonts only, light and dark themes, one badge colour per verdict. */
export const HTML_STYLE = `
:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1f24; --muted: #59636e; --line: #d1d9e0; --card: #f6f8fa;
  --track: #e6eaef; --bar: #1f883d;
  --passed: #1a7f37; --failed: #cf222e; --error: #bc4c00; --timeout: #8250df; --invalid: #6e7781; --infra: #0969da;
  --badge-fg: #ffffff;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #3d444d; --card: #151b23;
    --track: #262c36; --bar: #3fb950;
    --passed: #238636; --failed: #da3633; --error: #bd561d; --timeout: #8957e5; --invalid: #656c76; --infra: #1f6feb;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 1.6rem; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 32px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 24px 0 10px; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 0.92em; }
.meta, .note, footer { color: var(--muted); font-size: 0.9rem; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 20px 0 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 12px 18px; min-width: 130px; }
.card .num { font-size: 1.7rem; font-weight: 600; font-variant-numeric: tabular-nums; }
.card.main .num { font-size: 2.2rem; color: var(--passed); }
.card .lbl { color: var(--muted); font-size: 0.85rem; }
.badges { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: 0.8rem; font-weight: 600;
  color: var(--badge-fg); white-space: nowrap; }
.badge.passed { background: var(--passed); } .badge.failed { background: var(--failed); }
.badge.error { background: var(--error); } .badge.timeout { background: var(--timeout); }
.badge.invalid { background: var(--invalid); } .badge.infra { background: var(--infra); }
table { border-collapse: collapse; width: 100%; font-size: 0.92rem; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--card); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.reason { overflow-wrap: anywhere; max-width: 480px; }
.table-wrap { overflow-x: auto; }
.chart { max-width: 900px; display: block; }
.chart-track { fill: var(--track); }
.chart-bar { fill: var(--bar); }
.chart-label { fill: var(--fg); font-size: 14px; font-family: inherit; }
.chart-value { fill: var(--muted); font-size: 13px; font-family: inherit; }
.problems li { margin-bottom: 4px; overflow-wrap: anywhere; }
`;

/** The comparison parts: the task × model matrix and the sample drawer that opens beside it (:target, no script). */
export const HTML_COMPARE_STYLE = `
table.matrix { width: auto; }
table.matrix td.cell { min-width: 150px; }
.cell-rate { color: var(--muted); font-size: 0.8rem; margin-top: 2px; }
a.badge { text-decoration: none; }
a.badge:hover { outline: 2px solid var(--fg); }
tr.overall td { background: var(--card); }
#compare td:first-child code, table.matrix th code { white-space: nowrap; }
table.confusion { width: auto; font-size: 0.85rem; }
table.confusion th, table.confusion td { padding: 2px 8px; }
.sample { display: none; }
.sample:target { display: block; position: fixed; top: 0; right: 0; width: min(640px, 52vw); height: 100vh; overflow: auto;
  background: var(--bg); border-left: 2px solid var(--line); box-shadow: -8px 0 24px rgba(0, 0, 0, 0.18); padding: 8px 20px 32px; z-index: 10; }
.sample h3 { margin-top: 4px; }
.sample h4 { margin: 16px 0 6px; font-size: 0.95rem; }
.sample .close { text-align: right; margin: 0; }
.sample pre { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; overflow-x: auto; font-size: 0.8rem; line-height: 1.35; }
.diff .add { color: var(--passed); } .diff .del { color: var(--failed); } .diff .hunk { color: var(--timeout); } .diff .file { font-weight: 600; }
.votes li { margin-bottom: 6px; }
.sample li { overflow-wrap: anywhere; }
`;
