#!/usr/bin/env python3
"""Validates blesniff JSON output against a schema in schemas/, and checks that no object repeats a key.

Usage: validate_json.py SCHEMA FILE...   (each FILE one JSON document, or JSON Lines when it ends .jsonl)
Exit status: 0 valid, 1 invalid (reasons on standard error), 77 when the jsonschema module is absent.
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    sys.exit(77)


def no_repeats(pairs):
    keys = [k for k, _ in pairs]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError("object repeats key(s) " + ", ".join(repeated))
    return dict(pairs)


def main():
    schema = json.load(open(sys.argv[1]))
    validator = jsonschema.Draft202012Validator(schema)
    bad = 0
    for path in sys.argv[2:]:
        text = open(path, encoding="utf-8").read()
        docs = text.splitlines() if path.endswith(".jsonl") else [text]
        for n, doc in enumerate(docs, 1):
            if not doc.strip():
                continue
            try:
                value = json.loads(doc, object_pairs_hook=no_repeats)
            except ValueError as e:
                print(f"{path}:{n}: {e}", file=sys.stderr)
                bad += 1
                continue
            for e in validator.iter_errors(value):
                print(f"{path}:{n}: {'/'.join(map(str, e.absolute_path))}: {e.message}", file=sys.stderr)
                bad += 1
                break
            if bad > 20:
                sys.exit(1)
    sys.exit(1 if bad else 0)


main()
