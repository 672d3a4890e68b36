#!/usr/bin/env python3
"""Fails when the files of a Rust source tree import each other in a circle, or when
its top-level parts (each folder or file directly under the root) do.

    .ci/module_cycles.py src          # exit 1 and the circles, if there are any

An edge A -> B is a path in A that names B's module: `crate::...`, `super::...` or
`self::...`, in a `use` tree (braces expanded) or written out in code. Each path is
resolved to the longest module prefix that is a file, and then through that file's
re-exports: a path to an item a file only re-exports (`pub use x::Item;`, or
`pub(crate) use`) leads to the file that defines it, so `crate::ApiError` is an edge
to `error.rs`, not to `lib.rs`. A module's own declarations of
its children (`mod x;`), and its re-exports of their items, are not edges: a parent that declares a child and a child that
uses its parent's items are the ordinary shape of a module tree, not a circle. What is
reported are the strongly connected components of more than one file, and then of
more than one top-level part (the layers: `http` below `state` below `routes` and
`site`, and so on); without a circle, the parts are printed in layer order, lowest
first.

It reads source text only to draw the structure, as clippy does; it never decides what
the code means. Used by .ci/run on both crates, `src/` and `actors/src/`
(docs/architecture.md draws their layers).
"""

import os
import re
import sys


def modules(root):
    files = {}
    for folder, _, names in os.walk(root):
        for name in names:
            if name.endswith(".rs"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    files[path] = f.read()
    return files


def module_path(root, path):
    parts = os.path.relpath(path, root)[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def expand(tree):
    """`a::{b, c::{d, e}}` -> [`a::b`, `a::c::d`, `a::c::e`]."""
    tree = tree.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", tree, re.S)
    if not m:
        return [tree]
    prefix, inner = m.group(1), m.group(2)
    parts, depth, current = [], 0, ""
    for ch in inner:
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [prefix + x for part in parts if part.strip() for x in expand(part)]


def without_inline_tests(text):
    """`text` without its `#[cfg(test)] mod name { ... }` blocks: a test module inside a
    file says `super::` for the file's own module, and tests are not the layering."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append(text[i:m.start()])
        i = j
    out.append(text[i:])
    return "".join(out)


def absolute(me, named, children=()):
    """The module path a `crate::`, `super::` or `self::` path names, from module `me`
    (a file's module path), or a path starting with one of `me`'s child modules
    (`children`: `pub use error::ApiError;` in lib.rs); `None` for any other path
    (std, other crates)."""
    segments = [s.strip().split(" as ")[0].strip() for s in named.split("::")]
    if segments[0] in children:
        return list(me) + segments
    if segments[0] == "crate":
        return segments[1:]
    if segments[0] == "super":
        base, i = list(me[:-1]), 1
        while i < len(segments) and segments[i] == "super":
            base, i = base[:-1], i + 1
        return base + segments[i:]
    if segments[0] == "self":
        return list(me) + segments[1:]
    return None


def exported(named):
    """The name a `use` path brings in: its last segment, or its `as` alias."""
    last = named.split("::")[-1]
    return last.split(" as ")[-1].strip()


def edges(root, files):
    by_module = {tuple(module_path(root, p)): p for p in files}
    texts = {p: without_inline_tests(re.sub(r"//[^\n]*", "", t)) for p, t in files.items()}

    def children(me):
        return {m[-1] for m in by_module if len(m) == len(me) + 1 and m[:-1] == tuple(me)}

    # Per file, what it re-exports: name -> the module path it comes from.
    reexports = {}
    for path, text in texts.items():
        me = module_path(root, path)
        found = {}
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", text, re.S):
            for named in expand(m.group(1).replace("\n", " ")):
                if named.strip().endswith("*"):
                    continue
                target = absolute(me, named.strip(), children(me))
                if target is not None:
                    found[exported(named)] = target
        reexports[path] = found

    def resolve(parts, depth=0):
        for i in range(len(parts), 0, -1):
            file = by_module.get(tuple(parts[:i]))
            if file is None:
                continue
            rest = parts[i:]
            source = reexports[file].get(rest[0]) if rest else None
            if source is not None and depth < 16:
                return resolve(source + rest[1:], depth + 1) or file
            return file
        # No module prefix: an item of the crate root, maybe one it re-exports.
        root_file = by_module.get(())
        if root_file and parts and parts[0] in reexports[root_file] and depth < 16:
            return resolve(reexports[root_file][parts[0]] + parts[1:], depth + 1) or root_file
        return root_file

    graph = {p: set() for p in files}
    for path, text in texts.items():
        me = module_path(root, path)
        # A parent's re-export of its own descendants' items is its facade, not a
        # dependency (as `mod x;` is not): those paths are followed from their users.
        text = re.sub(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);",
                      lambda m: "" if all(
                          (absolute(me, n.strip(), children(me)) or [None])[:len(me) + 1][:len(me)]
                          == list(me) and len(absolute(me, n.strip(), children(me)) or []) > len(me)
                          for n in expand(m.group(1).replace("\n", " "))) else m.group(0),
                      text, flags=re.S)
        paths = [x for m in re.finditer(r"\buse\s+([^;]+);", text, re.S)
                 for x in expand(m.group(1).replace("\n", " "))]
        paths += re.findall(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", text)
        for named in paths:
            parts = absolute(me, named)
            if parts is None:
                continue
            target = resolve(parts)
            if target and target != path:
                graph[path].add(target)
    return graph


def circles(graph):
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def parts(root, graph):
    """The graph of the top-level parts: `http` for src/http/*, `settings` for
    src/settings.rs."""
    def part(path):
        first = os.path.relpath(path, root).split(os.sep)[0]
        return first[:-3] if first.endswith(".rs") else first

    layers = {part(p): set() for p in graph}
    for path, targets in graph.items():
        for target in targets:
            if part(target) != part(path):
                layers[part(path)].add(part(target))
    return layers


def layer_order(layers):
    """Each part after every part it uses."""
    order, placed = [], set()
    while len(order) < len(layers):
        ready = sorted(p for p in layers if p not in placed and layers[p] <= placed)
        order += ready
        placed.update(ready)
    return order


def report(root, kind, graph):
    found = circles(graph)
    for component in found:
        print(f"a circle of {len(component)} {kind} in {root}:")
        for node in component:
            inside = sorted(x for x in graph[node] if x in component)
            print(f"  {node} -> {', '.join(inside)}")
    return not found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "src"
    graph = edges(root, modules(root))
    layers = parts(root, graph)
    files_ok = report(root, "files", graph)
    layers_ok = report(root, "top-level parts", layers)
    if not (files_ok and layers_ok):
        sys.exit(1)
    print(f"{root}: no circle among {len(graph)} files; its parts, lowest layer first: "
          + ", ".join(layer_order(layers)))


if __name__ == "__main__":
    main()
