#!/usr/bin/env python3
"""The Spack package's variants against the project's CMake options, one to one (no Spack needed).

Reads packaging/spack/tessera/package.py with ast: the variants it declares (plus those of the
CudaPackage and ROCmPackage mix-ins it uses) and the define_from_variant(OPTION, VARIANT) calls
of cmake_args. Reads the CMake options (option() and cache variables) of CMakeLists.txt and the
.cmake files. Fails when a variant maps to no option or to an option that does not exist, when
an option is mapped twice or by no variant and is not set by cmake_args either (or listed below
as a developer option), or when a variant's default differs from its option's.

    python3 packaging/tests/spack_variants.py [SOURCE_DIR]
"""
import ast
import pathlib
import re
import sys

# Variants the mix-ins declare (Spack's CudaPackage and ROCmPackage).
MIXIN_VARIANTS = {
    "CudaPackage": {"cuda": False, "cuda_arch": None},
    "ROCmPackage": {"rocm": False, "amdgpu_target": None},
}
# CMake's own variables that a variant may set (no option() of ours declares them).
CMAKE_VARIABLES = {"CMAKE_CUDA_ARCHITECTURES"}
# Options for developers of Tessera, not for a package: the sanitizer build and the fuzzer.
DEVELOPER_OPTIONS = {"TESSERA_ENABLE_SANITIZERS", "TESSERA_ENABLE_FUZZ"}


def cmake_options(root):
    """{name: set of defaults} of option() and {name} of cache variables in the CMake files."""
    options, cache = {}, set()
    files = [root / "CMakeLists.txt"] + sorted(root.glob("cmake/*.cmake"))
    files += sorted(root.glob("src/**/*.cmake"))
    for path in files:
        text = path.read_text()
        for m in re.finditer(r'^\s*option\((\w+)\s+"(?:[^"\\]|\\.)*"\s+(\w+)\)', text, re.M):
            options.setdefault(m.group(1), set()).add(m.group(2).upper() in ("ON", "TRUE", "1"))
        for m in re.finditer(r"^\s*set\((\w+)\s.*\bCACHE\b", text, re.M):
            cache.add(m.group(1))
    return options, cache


def package_variants(path):
    """({variant: default}, [(option, variant)], {options set by self.define}, bases)."""
    tree = ast.parse(path.read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    bases = {b.id for b in cls.bases if isinstance(b, ast.Name)}
    variants = {}
    for base in bases & MIXIN_VARIANTS.keys():
        variants.update(MIXIN_VARIANTS[base])
    for node in cls.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "variant":
            name = call.args[0].value
            default = next((k.value for k in call.keywords if k.arg == "default"), None)
            variants[name] = default.value if isinstance(default, ast.Constant) else None
    mapped, defined = [], set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if node.func.attr == "define_from_variant" and len(args) == 2:
                mapped.append((args[0], args[1]))
            elif node.func.attr == "define" and args:
                defined.add(args[0])
    return variants, mapped, defined, bases


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    options, cache = cmake_options(root)
    variants, mapped, defined, bases = package_variants(
        root / "packaging/spack/tessera/package.py"
    )
    errors = []
    for base in ("CMakePackage", "CudaPackage", "ROCmPackage"):
        if base not in bases:
            errors.append(f"the package is not a {base}")
    known = set(options) | cache | CMAKE_VARIABLES
    by_variant, by_option = {}, {}
    for option, variant in mapped:
        by_variant.setdefault(variant, []).append(option)
        by_option.setdefault(option, []).append(variant)
        if variant not in variants:
            errors.append(f"cmake_args maps {option} from '{variant}', which is no variant")
        if option not in known:
            errors.append(f"variant '{variant}' sets {option}, which no CMake file declares")
    for variant, default in sorted(variants.items()):
        opts = by_variant.get(variant, [])
        if len(opts) != 1:
            errors.append(f"variant '{variant}' maps to {len(opts)} CMake options {opts}")
            continue
        defaults = options.get(opts[0])
        if isinstance(default, bool) and defaults and len(defaults) == 1:
            if default != next(iter(defaults)):
                errors.append(
                    f"variant '{variant}' defaults to {default}, {opts[0]} to {not default}"
                )
    for option, vs in sorted(by_option.items()):
        if len(vs) > 1:
            errors.append(f"{option} is set by several variants {vs}")
    for option in sorted(options):
        if option in by_option or option in DEVELOPER_OPTIONS:
            continue
        if option not in defined:
            errors.append(f"CMake option {option} has no variant and cmake_args does not set it")
    for line in errors:
        print(f"spack_variants: {line}")
    if errors:
        return 1
    pairs = ", ".join(f"{v}={o}" for o, v in sorted(mapped, key=lambda p: p[1]))
    print(f"spack_variants: {len(mapped)} variants match the CMake options one to one ({pairs})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
