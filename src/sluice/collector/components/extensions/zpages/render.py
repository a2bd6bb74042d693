"""The zPages as HTML a person reads in a browser, and as JSON.

Plain, self-contained HTML: one small inline style sheet and nothing loaded
from elsewhere (upstream's pages pull fonts and CSS from Google's servers,
which a collector's debug port should not make a browser do). Every value
from the config or a status report is escaped.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from html import escape
from urllib.parse import urlencode

from sluice.collector.components.extensions.zpages.pages import (
    ComponentView,
    ExtensionsPage,
    FeaturesPage,
    Page,
    PipelinesPage,
    PipelineView,
    Selected,
    ServicePage,
    StatusView,
    TracesPage,
)

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
nav a { margin-right: 1.2em; }
table { border-collapse: collapse; margin: 0.4em 0 1.4em; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; vertical-align: top; }
th { background: #eee; }
tr:nth-child(even) td { background: #f8f8f8; }
.ok { color: #17702a; }
.bad { color: #b3261e; }
.other { color: #666; }
.note { color: #555; }
"""


def json_body(page: Page) -> bytes:
    """A page's data as JSON (field names as the dataclasses spell them)."""
    return json.dumps(dataclasses.asdict(page), ensure_ascii=False, indent=2).encode()


def document(title: str, pages: Iterable[str], body: Iterable[str], json_link: str) -> bytes:
    """A whole page: navigation between the zPages, the title, the body."""
    nav = "".join(f'<a href="{escape(p)}">{escape(p)}</a>' for p in pages)
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{escape(title)}</title>",
            f"<style>{_STYLE}</style>",
            "</head><body>",
            f"<nav>{nav}</nav>",
            f"<h2>{escape(title)}</h2>",
            *body,
            f'<p class="note"><a href="{escape(json_link)}">this page as JSON</a></p>',
            "</body></html>",
            "",
        ]
    ).encode()


def _table(head: list[str], rows: Iterable[list[str]]) -> str:
    """`rows` hold HTML already (escaped where needed)."""
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    lines = ["<table>", f"<tr>{header}</tr>"]
    lines.extend("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    lines.append("</table>")
    return "\n".join(lines)


def _status(status: StatusView | None) -> str:
    if status is None:
        return '<span class="other">not reported</span>'
    css = (
        "ok"
        if status.status == "StatusOK"
        else "bad"
        if status.status.endswith("Error")
        else "other"
    )
    text = (
        f'<span class="{css}" title="since {escape(status.since)}">{escape(status.status)}</span>'
    )
    return f"{text}: {escape(status.error)}" if status.error else text


def _properties(title: str, values: dict[str, str]) -> str:
    rows = ([f"<b>{escape(k)}</b>", escape(v)] for k, v in values.items())
    return f"<h4>{escape(title)}</h4>\n" + _table(["Property", "Value"], rows)


def html(page: Page) -> tuple[str, list[str]]:
    """A page's title and body."""
    if isinstance(page, ServicePage):
        return f"Service {page.build_info['command']}".rstrip(), _service(page)
    if isinstance(page, PipelinesPage):
        return "builtPipelines", _pipelines(page)  # upstream's title
    if isinstance(page, ExtensionsPage):
        return "Extensions", _extensions(page)
    if isinstance(page, TracesPage):
        return "Trace Spans", _traces(page)
    assert isinstance(page, FeaturesPage)
    return "Feature Gates", _features(page)


def _service(page: ServicePage) -> list[str]:
    titles = {"command": "Command", "description": "Description", "version": "Version"}
    runtime = {
        "start_timestamp": "StartTimestamp",
        "uptime": "Uptime",
        "python": "Python",
        "os": "OS",
        "arch": "Arch",
        "pid": "PID",
    }
    links = "".join(f'<li><a href="{escape(p)}">{escape(p)}</a></li>' for p in page.pages)
    return [
        f"<p>Collector status: {_status(page.status)}</p>",
        _properties("Build Info", {titles[k]: v for k, v in page.build_info.items()}),
        _properties("Runtime Info", {runtime[k]: v for k, v in page.runtime_info.items()}),
        f"<ul>{links}</ul>",
    ]


def _component_link(pipeline: str, component: ComponentView, role: str) -> str:
    query = urlencode(
        {"zpipelinename": pipeline, "zcomponentname": component.id, "zcomponentkind": role}
    )
    label = escape(component.id) + (" (connector)" if component.kind == "connector" else "")
    return f'<a href="?{escape(query)}">{label}</a> {_status(component.status)}'


def _pipeline_row(row: PipelineView) -> list[str]:
    def cell(components: list[ComponentView], role: str) -> str:
        return "<br>".join(_component_link(row.full_name, c, role) for c in components) or "-"

    processors = " &rarr;<br>".join(
        _component_link(row.full_name, c, "processor") for c in row.processors
    )
    return [
        escape(row.full_name),
        escape(row.input_type),
        "true" if row.mutates_data else "false",
        cell(row.receivers, "receiver"),
        processors or "-",
        cell(row.exporters, "exporter"),
        _status(row.status),
    ]


def _selected(selected: Selected | None) -> list[str]:
    if selected is None:
        return []
    component = selected.component
    return [
        f"<h4>{escape(selected.title)}</h4>",
        f"<p>Status: {_status(component.status)}</p>",
    ]


def _pipelines(page: PipelinesPage) -> list[str]:
    head = ["FullName", "InputType", "MutatesData", "Receivers", "Processors", "Exporters"]
    if not page.pipelines:
        return ['<p class="note">No pipelines.</p>', *_selected(page.selected)]
    return [
        _table([*head, "Status"], (_pipeline_row(p) for p in page.pipelines)),
        *_selected(page.selected),
    ]


def _extensions(page: ExtensionsPage) -> list[str]:
    if not page.extensions:
        body = ['<p class="note">No extensions.</p>']
    else:
        rows = (
            [
                f'<a href="?{escape(urlencode({"zextensionname": e.id}))}">{escape(e.id)}</a>',
                _status(e.status),
            ]
            for e in page.extensions
        )
        body = [_table(["Extension", "Status"], rows)]
    return body + _selected(page.selected)


def _features(page: FeaturesPage) -> list[str]:
    if not page.feature_gates:
        return [
            '<p class="note">This distribution registers no feature gates: there is '
            "nothing to enable or disable with <code>--feature-gates</code>.</p>"
        ]
    head = ["ID", "Enabled", "Description", "Stage", "From Version", "To Version", "Reference URL"]
    rows = (
        [
            escape(g.id),
            "true" if g.enabled else "false",
            escape(g.description),
            escape(g.stage),
            escape(g.from_version),
            escape(g.to_version),
            escape(g.reference_url),
        ]
        for g in page.feature_gates
    )
    return [_table(head, rows)]


def _traces(page: TracesPage) -> list[str]:
    head = ["Name", "active", *page.latency_buckets, "Errors"]
    rows = (
        [escape(s.name), str(s.active), *(str(n) for n in s.latency), str(s.errors)]
        for s in page.spans
    )
    body = [_table(head, rows)]
    if not page.spans:
        body.append('<p class="note">No spans: this collector does not trace its own work.</p>')
    return body
