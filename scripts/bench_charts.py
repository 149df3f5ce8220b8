#!/usr/bin/env python3
"""SVG charts for scripts/bench_http.py: one image per scenario, throughput and p99 latency per
server side by side as horizontal bars, each bar labelled with its figure. Plain SVG written by
hand (no plotting library to install); the images are committed beside docs/performance.md."""
from xml.sax.saxutils import escape

WIDTH, ROW, TOP, LEFT, GAP = 860, 26, 56, 210, 40
PANEL = (WIDTH - LEFT - GAP - 20) // 2
TOLLGATE, OTHER = "#1f6feb", "#8b949e"


def _panel(x, rows, key, title, unit, fmt):
    top = max((r[key] for _, r in rows), default=0) or 1
    out = [f'<text x="{x}" y="{TOP - 22}" class="h">{escape(title)}</text>']
    for i, (server, r) in enumerate(rows):
        y = TOP + i * ROW
        w = max(1, int(PANEL * 0.78 * r[key] / top))
        colour = TOLLGATE if server.startswith("tollgate") else OTHER
        out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{ROW - 8}" fill="{colour}"/>')
        out.append(f'<text x="{x + w + 6}" y="{y + ROW - 13}" class="v">{fmt(r[key])} {unit}</text>')
    return out


def chart(scenario, rows):
    """`rows`: [(server label, {"rps": .., "p99": ..}), ...] in display order."""
    height = TOP + len(rows) * ROW + 16
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="13">',
           '<style>.h{font-weight:bold}.v{fill:#24292f}.s{fill:#24292f}</style>',
           f'<rect width="{WIDTH}" height="{height}" fill="white"/>',
           f'<text x="10" y="20" class="h">{escape(scenario)}</text>']
    for i, (server, _) in enumerate(rows):
        out.append(f'<text x="10" y="{TOP + i * ROW + ROW - 13}" class="s">{escape(server)}</text>')
    out += _panel(LEFT, rows, "rps", "throughput (higher is better)", "req/s", lambda v: f"{v:,.0f}")
    out += _panel(LEFT + PANEL + GAP, rows, "p99", "p99 latency (lower is better)", "ms", lambda v: f"{v:.2f}")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def slug(scenario):
    return "".join(c if c.isalnum() else "-" for c in scenario.lower()).strip("-").replace("--", "-")
