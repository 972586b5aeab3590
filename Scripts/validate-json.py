#!/usr/bin/env python3
"""Validates launchprof's JSON documents against the JSON Schemas (draft 2020-12) in docs/formats/schema.

    python3 Scripts/validate-json.py SCHEMA.json DOCUMENT.json...   exit 0 valid, 1 invalid, 2 unusable
    python3 Scripts/validate-json.py --serve SCHEMA_DIR              for the tests: one process, many documents

In --serve mode each request on stdin is a line "<schema file name> <byte count>" followed by that
many bytes of JSON; each answer is one line on stdout, "ok" or "invalid: <reasons>".
Needs the `jsonschema` package with draft 2020-12 support (4.0 or later; Debian 12: python3-jsonschema).
"""
import json
import os
import sys

try:
    from jsonschema import Draft202012Validator
except ImportError as error:  # an older jsonschema, or none
    sys.stderr.write(f"validate-json: jsonschema with draft 2020-12 support is missing ({error}); "
                     "install python3-jsonschema (Scripts/setup.sh) or `pip install jsonschema`\n")
    sys.exit(2)


def load_validator(path):
    with open(path, encoding="utf-8") as handle:
        schema = json.load(handle)
    Draft202012Validator.check_schema(schema)
    # A schema may refer to another beside it ("inspect-report.schema.json#/$defs/Object"):
    # every schema of the directory is known by its $id.
    directory = os.path.dirname(os.path.abspath(path))
    known = {}
    for name in sorted(os.listdir(directory)):
        if name.endswith(".schema.json"):
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                other = json.load(handle)
            if "$id" in other:
                known[other["$id"]] = other
    try:
        from referencing import Registry, Resource
    except ImportError:  # jsonschema before 4.18 (Debian 12's 4.10) resolves through RefResolver
        from jsonschema import RefResolver
        return Draft202012Validator(schema, resolver=RefResolver.from_schema(schema, store=known))
    registry = Registry().with_resources((uri, Resource.from_contents(other)) for uri, other in known.items())
    return Draft202012Validator(schema, registry=registry)


def problems(validator, document):
    errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    return ["/" + "/".join(str(p) for p in error.absolute_path) + ": " + error.message for error in errors[:20]]


def serve(directory):
    validators = {}
    stdin = sys.stdin.buffer
    while True:
        header = stdin.readline()
        if not header:
            return
        name, count = header.decode("utf-8").rsplit(" ", 1)
        body = stdin.read(int(count))
        try:
            if name not in validators:
                validators[name] = load_validator(os.path.join(directory, name))
            found = problems(validators[name], json.loads(body))
            answer = "ok" if not found else "invalid: " + " | ".join(found)
        except Exception as error:  # a bad document or schema is an answer, not a crash
            answer = f"invalid: {type(error).__name__}: {error}"
        sys.stdout.write(answer.replace("\n", " ") + "\n")
        sys.stdout.flush()


def main(arguments):
    if len(arguments) == 2 and arguments[0] == "--serve":
        serve(arguments[1])
        return 0
    if len(arguments) < 2:
        sys.stderr.write(__doc__)
        return 2
    validator = load_validator(arguments[0])
    status = 0
    for path in arguments[1:]:
        with open(path, encoding="utf-8") as handle:
            found = problems(validator, json.load(handle))
        for problem in found:
            print(f"{path}{problem}")
        status = 1 if found else status
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
