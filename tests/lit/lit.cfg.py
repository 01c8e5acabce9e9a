# lit configuration for tric's golden tests. Each .tri / .tir file carries its own RUN lines.
#   %tric      the tric binary         %ptxas   ptxas (tests needing it: REQUIRES: ptxas)
#   %try-ptxas ptxas when it is found, else `true`: for a test whose FileCheck lines must run
#              everywhere and whose ptxas step validates the PTX only where it can
#   FileCheck  Debian's llvm-19-tools  not      inverts an exit status
import os
import lit.formats

site = lit_config.params.get("tric_site_config")
if site:
    lit_config.load_config(config, site)

config.name = "tric"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tri", ".tir", ".test"]
config.excludes = ["Inputs"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tric_bin_dir, "tests", "lit-out")

config.substitutions.append(("%tric", os.path.join(config.tric_bin_dir, "tric")))
config.substitutions.append(("%examples", os.path.join(config.tric_src_dir, "examples")))
config.substitutions.append(("%bindir", config.tric_bin_dir))
llvm_bin = os.path.dirname(config.filecheck)
config.environment["PATH"] = os.pathsep.join([llvm_bin, config.environment.get("PATH", os.environ.get("PATH", ""))])
if config.ptxas and not config.ptxas.endswith("NOTFOUND") and os.path.exists(config.ptxas):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", config.ptxas))
    config.substitutions.append(("%try-ptxas", config.ptxas))
else:
    config.substitutions.append(("%try-ptxas", "true"))
for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TRIC_CACHE_DIR", "HOME"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
