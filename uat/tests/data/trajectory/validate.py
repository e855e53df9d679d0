"""Independent readers of `studyloop-uat export-trajectory` output (issue 28).

Usage: validate.py atif|otlp FILE

atif: Harbor's own pydantic model (harbor.models.trajectories.Trajectory,
      `extra="forbid"`, sequential step ids, agent-only fields) parses it.
otlp: opentelemetry-proto's ExportTraceServiceRequest parses it with
      protobuf's json_format (unknown fields refused). OTLP/JSON writes trace
      and span ids as hex where proto3 JSON expects base64 (the OTLP spec's
      one departure), so ids are hex-decoded and checked for length first.
      Then the GenAI conventions this export claims: every turn span has
      gen_ai.operation.name = invoke_agent and input/output messages that
      parse as JSON message lists.

Exit 0 valid; 1 invalid (the reason on stderr).
Installed by `just deps-trajectory` into .deps/trajectory-venv, hash-pinned.
"""

import base64
import json
import sys


def atif(doc):
    from harbor.models.trajectories import Trajectory

    t = Trajectory.model_validate(doc)
    return f"ATIF {t.schema_version}: {len(t.steps)} steps"


def otlp(doc):
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                for key, size in (("traceId", 16), ("spanId", 8), ("parentSpanId", 8)):
                    if key not in span:
                        continue
                    raw = bytes.fromhex(span[key])
                    if len(raw) != size or not any(raw):
                        raise ValueError(f"{key} {span[key]!r} is not {size} non-zero bytes")
                    span[key] = base64.b64encode(raw).decode()
    req = ExportTraceServiceRequest()
    json_format.Parse(json.dumps(doc), req)
    turns = 0
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                if span.end_time_unix_nano < span.start_time_unix_nano or span.start_time_unix_nano == 0:
                    raise ValueError(f"span {span.name!r} has no valid time range")
                attrs = {a.key: a.value.string_value for a in span.attributes}
                if span.parent_span_id:
                    turns += 1
                    if attrs.get("gen_ai.operation.name") != "invoke_agent":
                        raise ValueError(f"turn span {span.name!r} lacks gen_ai.operation.name")
                    for key, role in (("gen_ai.input.messages", "user"), ("gen_ai.output.messages", "assistant")):
                        msgs = json.loads(attrs[key])
                        if not msgs or msgs[0]["role"] != role or msgs[0]["parts"][0]["type"] != "text":
                            raise ValueError(f"{key} of {span.name!r} is not a {role} text message")
    return f"OTLP: {turns} turn spans"


def main():
    kind, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    try:
        print({"atif": atif, "otlp": otlp}[kind](doc))
    except Exception as e:  # every refusal is the answer, with its words
        print(f"{kind} invalid: {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(1)


main()
