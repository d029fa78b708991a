"""The served contract (`GET /openapi.yaml`) read back by a real YAML parser (PyYAML, which reads
YAML 1.1: the stricter reading for plain scalars) for a `--preferences` file full of strings that
YAML could misread: every description, enum value and default must come back exactly, and the
document must stay valid OpenAPI 3.1. Run with `make ofrep-test`."""
import json
import tempfile
import urllib.request
from pathlib import Path

import yaml
from openapi_spec_validator import validate

from test_openfeature_client import Server

TRICKY = [
    "yes", "No", "on", "null", "~", "123", "0x1F", "1e3", ".5", "3.1.0", "2026-11-24", "12:30",
    "- dash", "? what", "a: b", "a #b", "#hash", "&anchor", "*alias", "!tag", "%percent", "@at", "`tick`",
    "'single'", '"double"', "[flow]", "{flow}", "trailing:", " lead", "trail ", "tab\there", "back\\slash",
    "line\nbreak", "two lines\n", "ends\n\n", "\nstarts", "  indented\nnext", "nel\u0085next", "ls\u2028ps\u2029",
    "bom\ufeff", "ctl\u0007", "ß ü 漢字 🎉", "",
]


def test_tricky_strings_survive_the_served_contract():
    declarations = {
        f"k{index}": {"type": "string", "default": text, "description": text or "empty", "enum": [text, "plain"]}
        for index, text in enumerate(TRICKY)
    }
    declarations["bounded"] = {"type": "integer", "default": 2, "minimum": -3, "maximum": 9007199254740992}
    declarations["fraction"] = {"type": "number", "default": 1e21, "minimum": -0.25, "maximum": 1e300}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "tricky.json"
        path.write_text(json.dumps(declarations))
        server = Server("--preferences", str(path))
        try:
            with urllib.request.urlopen(server.base + "/openapi.yaml", timeout=10) as response:
                document = yaml.safe_load(response.read().decode("utf-8"))
            with urllib.request.urlopen(server.base + "/preferences/schema", timeout=10) as response:
                served = json.loads(response.read())
        finally:
            server.stop()
    validate(document)
    schemas = document["components"]["schemas"]
    for key, declaration in declarations.items():
        value = schemas["PreferenceValue." + key]
        assert value["default"] == declaration["default"], key
        if declaration["type"] == "string":
            assert value["description"] == declaration["description"], key
            assert value["enum"] == declaration["enum"], key
        assert document["paths"]["/preferences/" + key]["get"]["operationId"] == "getPreference." + key
        assert served[key] == declaration, key
    assert (schemas["PreferenceValue.bounded"]["minimum"], schemas["PreferenceValue.bounded"]["maximum"]) == (-3, 9007199254740992)
    assert isinstance(schemas["PreferenceValue.fraction"]["default"], float)
    assert (schemas["PreferenceValue.fraction"]["minimum"], schemas["PreferenceValue.fraction"]["maximum"]) == (-0.25, 1e300)
