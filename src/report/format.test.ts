import { describe, expect, it } from "vitest";
import { codeSpanMarkdown, escapeHtml, escapeMarkdown, escapeXml, escapeXmlText, formatRate, formatVerdictCounts, truncate } from "./format.js";

describe("escaping", () => {
  it("escapes HTML special characters, quotes included", () => {
    expect(escapeHtml(`<a href="x">&'</a>`)).toBe("&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  });

  it("makes XML-forbidden control characters harmless", () => {
    const ansi = "\u001b[31mred\u001b[0m\u0000";
    expect(escapeXml(ansi)).toBe("\uFFFD[31mred\uFFFD[0m\uFFFD");
    expect(escapeXmlText("a\nb<c")).toBe("a\nb&lt;c");
    expect(escapeXml("a\nb")).toBe("a&#10;b");
    expect(escapeHtml("\u0007")).toBe("\uFFFD");
  });

  it("keeps Markdown table cells on one line and escapes syntax", () => {
    expect(escapeMarkdown("a | b\n<script>*x*")).toBe("a \\| b \\<script\\>\\*x\\*");
    expect(escapeMarkdown("plain text-1.0")).toBe("plain text-1.0");
  });

  it("builds code spans that survive backticks and pipes", () => {
    expect(codeSpanMarkdown("task-a")).toBe("`task-a`");
    expect(codeSpanMarkdown("a`b|c")).toBe("``a`b\\|c``");
    expect(codeSpanMarkdown("`x")).toBe("`` `x ``");
  });
});

describe("formatting", () => {
  it("formats rates, counts and cuts", () => {
    expect(formatRate(0.27777)).toBe("27.8%");
    expect(formatRate(1)).toBe("100.0%");
    expect(formatRate(null)).toBe("n/a");
    expect(formatVerdictCounts({ passed: 2, failed: 0, error: 1, timeout: 0, invalid: 0, infra: 3 })).toBe("2 passed, 1 error, 3 infra");
    expect(formatVerdictCounts({ passed: 0, failed: 0, error: 0, timeout: 0, invalid: 0, infra: 0 })).toBe("none");
    expect(truncate("abcdef", 4)).toBe("abc…");
    expect(truncate("abc", 4)).toBe("abc");
  });
});
