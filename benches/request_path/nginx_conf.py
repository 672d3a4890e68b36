#!/usr/bin/env python3
"""Renders benches/request_path/nginx.conf.in for benches/request_path.sh.

    nginx_conf.py TEMPLATE OUT NAME=VALUE... NAME=@FILE...

Each @NAME@ of the template becomes VALUE, or the contents of FILE. Values that land
inside a single-quoted nginx string (the *_BODY ones) are escaped so that nginx gives
back exactly these bytes: backslash and quote are backslash-escaped, and '$' (which
nginx would take for a variable and has no escape for) becomes ${dollar}, a variable
the template defines as "$". The answers are JSON, so they are text; anything else is
refused. Any placeholder left unfilled is an error.
"""

import re
import sys


def nginx_string(text):
    return (
        text.replace("\\", "\\\\").replace("'", "\\'").replace("$", "${dollar}")
    )


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    template, out = argv[1], argv[2]
    with open(template) as f:
        text = f.read()
    for arg in argv[3:]:
        name, _, value = arg.partition("=")
        if value.startswith("@"):
            with open(value[1:], "rb") as f:
                value = f.read().decode("utf-8")  # refuses bytes that are not text
        if name.endswith("_BODY"):
            value = nginx_string(value)
        text = text.replace(f"@{name}@", value)
    left = re.findall(r"@[A-Z_]+@", text)
    if left:
        sys.exit(f"nginx_conf.py: unfilled placeholders {sorted(set(left))}")
    with open(out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main(sys.argv)
