#!/usr/bin/python3
"""The published job-spec JSON Schema (resources/job-spec.schema.json) and sealtrainctl's own
parser agree: the example specs pass both and hash alike in JSON and YAML; each broken spec is
refused by both (a standard validator, python3-jsonschema, and `sealtrainctl job validate`),
the parser's error naming the field.

    test_job_schema.py SEALTRAINCTL SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import jsonschema
    import yaml
except ModuleNotFoundError as missing:
    print(f"SKIP test_job_schema: {missing.name} is not installed (scripts/setup installs it).")
    sys.exit(77)

CTL, SOURCE = sys.argv[1], sys.argv[2]
schema = json.load(open(os.path.join(SOURCE, "resources", "job-spec.schema.json")))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)


def ctl_validate(path, *extra):
    return subprocess.run([CTL, "job", "validate", path, *extra], capture_output=True, text=True)


examples = os.path.join(SOURCE, "resources", "jobs")
for name in sorted(os.listdir(examples)):
    path = os.path.join(examples, name)
    document = yaml.safe_load(open(path))
    errors = list(validator.iter_errors(document))
    assert not errors, f"{name}: {errors[0].message}"
    result = ctl_validate(path)
    assert result.returncode == 0, f"{name}: {result.stderr}"
    # The canonical form is itself a valid spec with the same hash.
    canonical = ctl_validate(path, "--canonical").stdout
    assert not list(validator.iter_errors(json.loads(canonical))), name
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        handle.write(canonical)
    again = ctl_validate(handle.name)
    os.unlink(handle.name)
    assert again.stdout.splitlines()[-1] == result.stdout.splitlines()[-1], name
    print(f"{name}: valid for the schema and the parser, {result.stdout.splitlines()[-1]}")

base = yaml.safe_load(open(os.path.join(examples, "fortunes-small.json")))
broken = {
    "schedule.steps": lambda s: s["schedule"].pop("steps"),
    "model.layerz": lambda s: s["model"].update({"layerz": 2}),
    "resources.device": lambda s: s["resources"].update({"device": "tpu"}),
    "name": lambda s: s.update({"name": "Not A Name"}),
    "priority": lambda s: s.update({"priority": 1000}),
    "limits.max_restarts": lambda s: s.update({"limits": {"max_restarts": -1}}),
    "spec_version": lambda s: s.update({"spec_version": 2}),
    "resources.gpus_per_node": lambda s: s["resources"].update({"device": "cuda", "gpus_per_node": 0}),
}
for field, breaks in broken.items():
    document = json.loads(json.dumps(base))
    breaks(document)
    assert list(validator.iter_errors(document)), f"the schema accepts a broken {field}"
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(document, handle)
    result = ctl_validate(handle.name)
    os.unlink(handle.name)
    assert result.returncode != 0, f"sealtrainctl accepts a broken {field}"
    assert f"'{field}'" in result.stderr, f"{field}: {result.stderr}"
    print(f"broken {field}: refused by the schema and by sealtrainctl ({result.stderr.strip()})")
