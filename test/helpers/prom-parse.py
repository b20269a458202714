# Parses a Prometheus text exposition (stdin) with client_python's own parser, the reference for the
# format, and prints its families as JSON (stdout); a line it refuses exits 1 with the reason.
# Used by test/helpers/prom-text.ts; needs Debian's python3-prometheus-client (.ci/run installs it).
import json
import math
import sys

from prometheus_client.parser import text_string_to_metric_families


def value(v):
    # JSON has no Infinity or NaN: those go as text.
    return v if math.isfinite(v) else repr(v)


try:
    families = [
        {"name": f.name, "type": f.type, "help": f.documentation, "samples": [[s.name, s.labels, value(s.value)] for s in f.samples]}
        for f in text_string_to_metric_families(sys.stdin.read())
    ]
except Exception as err:  # the parser raises ValueError and others for a bad line
    print(f"{type(err).__name__}: {err}", file=sys.stderr)
    sys.exit(1)
json.dump(families, sys.stdout)
