#!/usr/bin/env python3
"""Prints, as JSON, every note REDbot makes on one URL (subnotes included), after all its active
checks: `[{"name", "level", "summary"}, ...]`. One process per URL, because REDbot's event loop
(thor) is a process-wide singleton that is not meant to be run twice.

    python3 Tests/http/redbot_notes.py http://127.0.0.1:8080/openapi.yaml
"""
import json
import sys
from configparser import ConfigParser

import thor
from redbot.resource import HttpResource


def main(url):
    config = ConfigParser()
    config.read_dict({"redbot": {"enable_local_access": "True"}})
    resource = HttpResource(config["redbot"])
    resource.set_request(url)

    @thor.events.on(resource)
    def check_done():
        thor.stop()

    resource.check()
    thor.run()
    if not resource.check_done or not resource.response.complete:
        print(f"REDbot did not finish checking {url}", file=sys.stderr)
        return 2
    notes = []
    for note in resource.response.notes:
        for one in [note, *note.subnotes]:
            notes.append({"name": one.__class__.__name__, "level": one.level.value, "summary": one.summary})
    print(json.dumps(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
