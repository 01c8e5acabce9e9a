# TricKernels.cmake: compile .tri kernels ahead of time, at build time, with the `tric` compiler.
# Included by tricConfig.cmake (find_package(tric)) and by tric's own CMakeLists.txt.
#
#   tric_add_kernels(<target>
#                    SOURCES a.tri [b.tri ...]
#                    [NAME stem]               # output stem (one source only); default: its name
#                    [ARCH sm_90a]             # --arch for PTX; default: tric's (sm_90)
#                    [EMIT ptx|ir ...]         # what to write; default: ptx
#                    [OPTIONS --signature=... -D BLOCK=1024 --num-warps=8 ...]
#                    [OUTPUT_DIRECTORY dir]    # default: <current binary dir>/tric_kernels/<target>
#                    [EMBED])                  # also a header holding each output's text
#
# For each source, and each kind in EMIT, a build rule runs
#     tric <source> --emit=<kind> [--arch=ARCH] OPTIONS -o <dir>/<stem>.ptx|.tir
# (rerun when the source or the compiler changes), <target> depends on the outputs, and gets a
# compile definition with the output's absolute path, named from the stem in upper case with
# every other character as '_':
#     vector_add.tri -> TRIC_KERNEL_VECTOR_ADD_PTX="/.../vector_add.ptx"
#                       TRIC_KERNEL_VECTOR_ADD_TIR="/.../vector_add.tir"   (EMIT ir)
# so the program hands it to tric_module_load_file: the PTX on a cuda device, the .tir (tile IR)
# on "cpu" (the interpreter). Neither needs the compiler at run time, so such a program can link
# tric::runtime (libtric_runtime, no LLVM) instead of tric::tric.
#
# With EMBED the program does not need the files either: each output also becomes a header in
# the output directory (on the target's include path), <stem>_<kind>.h, defining the text as
#     static const char tric_kernel_vector_add_ptx[] = {...};      (NUL-terminated)
# for tric_module_load_ptx(dev, tric_kernel_vector_add_ptx, &mod) on cuda, or, for the tile IR,
# tric_module_compile(dev, tric_kernel_vector_add_tir, "vector_add.tir", NULL, &mod) on cpu (a
# name ending in .tir is read as tile IR, which libtric_runtime accepts).
#
# The compiler is the imported executable tric::cli (the package's bin/tric), or, inside tric's
# own build, its tric-cli target; set TRIC_KERNELS_COMPILER to use another.

# `cmake -DTRIC_EMBED_IN=f -DTRIC_EMBED_OUT=h -DTRIC_EMBED_NAME=sym -P TricKernels.cmake`: the
# EMBED step, writing file f as a C array in header h.
if(CMAKE_SCRIPT_MODE_FILE AND DEFINED TRIC_EMBED_IN)
  file(READ ${TRIC_EMBED_IN} hex HEX)
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # Line breaks every 16 bytes, so the header stays readable by editors and diff.
  string(REPEAT "0x..," 16 row)
  string(REGEX REPLACE "(${row})" "\\1\n    " bytes "${bytes}")
  get_filename_component(in_name ${TRIC_EMBED_IN} NAME)
  file(WRITE ${TRIC_EMBED_OUT}
       "/* ${in_name}, written by tric_add_kernels(... EMBED): its text, NUL-terminated. */\n"
       "static const char ${TRIC_EMBED_NAME}[] = {\n    ${bytes}0x00};\n")
  return()
endif()

include_guard(GLOBAL)
set(_TRIC_KERNELS_FILE ${CMAKE_CURRENT_LIST_FILE})

function(tric_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 TK "EMBED" "NAME;ARCH;OUTPUT_DIRECTORY" "SOURCES;EMIT;OPTIONS")
  if(TK_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tric_add_kernels: unknown arguments ${TK_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "tric_add_kernels: ${target} is not a target")
  endif()
  if(NOT TK_SOURCES)
    message(FATAL_ERROR "tric_add_kernels(${target}): no SOURCES")
  endif()
  list(LENGTH TK_SOURCES nsources)
  if(TK_NAME AND nsources GREATER 1)
    message(FATAL_ERROR "tric_add_kernels(${target}): NAME names the output of one source")
  endif()
  if(NOT TK_EMIT)
    set(TK_EMIT ptx)
  endif()
  if(TRIC_KERNELS_COMPILER)
    set(compiler ${TRIC_KERNELS_COMPILER})
  elseif(TARGET tric::cli)
    set(compiler tric::cli)
  elseif(TARGET tric-cli)
    set(compiler tric-cli)
  else()
    message(FATAL_ERROR "tric_add_kernels: no tric compiler (tric::cli); set TRIC_KERNELS_COMPILER")
  endif()
  if(TARGET ${compiler})
    set(compiler_file $<TARGET_FILE:${compiler}>)
  else()
    set(compiler_file ${compiler})
  endif()
  if(NOT TK_OUTPUT_DIRECTORY)
    set(TK_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/tric_kernels/${target})
  endif()
  file(MAKE_DIRECTORY ${TK_OUTPUT_DIRECTORY})

  set(outputs)
  foreach(src IN LISTS TK_SOURCES)
    get_filename_component(src_abs ${src} ABSOLUTE)
    if(TK_NAME)
      set(stem ${TK_NAME})
    else()
      get_filename_component(stem ${src} NAME_WE)
    endif()
    string(TOUPPER ${stem} macro)
    string(MAKE_C_IDENTIFIER ${macro} macro)
    foreach(kind IN LISTS TK_EMIT)
      if(kind STREQUAL "ptx")
        set(ext ptx)
        set(arch_flag)
        if(TK_ARCH)
          set(arch_flag --arch=${TK_ARCH})
        endif()
      elseif(kind STREQUAL "ir")
        set(ext tir)
        set(arch_flag)
      else()
        message(FATAL_ERROR "tric_add_kernels(${target}): EMIT ${kind}: expected ptx or ir")
      endif()
      set(out ${TK_OUTPUT_DIRECTORY}/${stem}.${ext})
      string(TOUPPER ${ext} EXT)
      add_custom_command(
        OUTPUT ${out}
        COMMAND ${compiler} ${src_abs} --emit=${kind} ${arch_flag} ${TK_OPTIONS} -o ${out}
        DEPENDS ${src_abs} ${compiler_file}
        COMMENT "tric ${stem}.tri -> ${stem}.${ext}"
        VERBATIM)
      list(APPEND outputs ${out})
      target_compile_definitions(${target} PRIVATE TRIC_KERNEL_${macro}_${EXT}="${out}")
      if(TK_EMBED)
        string(MAKE_C_IDENTIFIER "tric_kernel_${stem}_${ext}" symbol)
        set(header ${TK_OUTPUT_DIRECTORY}/${stem}_${ext}.h)
        add_custom_command(
          OUTPUT ${header}
          COMMAND ${CMAKE_COMMAND} -DTRIC_EMBED_IN=${out} -DTRIC_EMBED_OUT=${header}
                  -DTRIC_EMBED_NAME=${symbol} -P ${_TRIC_KERNELS_FILE}
          DEPENDS ${out} ${_TRIC_KERNELS_FILE}
          COMMENT "tric_add_kernels: ${stem}.${ext} -> ${stem}_${ext}.h"
          VERBATIM)
        list(APPEND outputs ${header})
      endif()
    endforeach()
  endforeach()
  # The outputs hang on a target of their own: several targets may use the same kernels' files
  # only through one rule, and <target> is built after them.
  set(kernels_target ${target}_tric_kernels)
  set(n 1)
  while(TARGET ${kernels_target})
    math(EXPR n "${n} + 1")
    set(kernels_target ${target}_tric_kernels_${n})
  endwhile()
  add_custom_target(${kernels_target} DEPENDS ${outputs})
  add_dependencies(${target} ${kernels_target})
  if(TK_EMBED)
    target_include_directories(${target} PRIVATE ${TK_OUTPUT_DIRECTORY})
  endif()
endfunction()
