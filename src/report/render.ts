import { renderHtml } from "./render-html.js";
import { renderJunit } from "./render-junit.js";
import { renderMarkdown } from "./render-markdown.js";
import { renderJson } from "./render-json.js";
import type { SampleDetails } from "./sample-details.js";
import type { ReportFormat, Summary } from "./types.js";

/** Render a summary in one of the report formats. */
export function renderReport(summary: Summary, format: ReportFormat, details?: Map<string, SampleDetails>): string {
  switch (format) {
    case "md":
      return renderMarkdown(summary);
    case "html":
      return renderHtml(summary, details);
    case "junit":
      return renderJunit(summary);
    case "json":
      return renderJson(summary);
  }
}
