# The top-level add_compile_options() (-Wall ...) are gcc flags; nvcc rejects
# them. Call gpuraid_cuda_safe_compile_options() in a directory that compiles
# CUDA: it keeps them for C/C++ and passes them to nvcc's host compiler.
function(gpuraid_cuda_safe_compile_options)
  get_property(opts DIRECTORY PROPERTY COMPILE_OPTIONS)
  set(wrapped)
  foreach(o IN LISTS opts)
    if(o MATCHES "^\\$<")  # already a generator expression: leave it
      list(APPEND wrapped "${o}")
    else()
      list(APPEND wrapped "$<$<NOT:$<COMPILE_LANGUAGE:CUDA>>:${o}>" "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${o}>")
    endif()
  endforeach()
  set_property(DIRECTORY PROPERTY COMPILE_OPTIONS "${wrapped}")
endfunction()

# Target properties every CUDA target of the project shares: the five
# supported GPU generations as SASS plus PTX for newer ones, C++17, the
# static runtime (as CUDA::cudart_static: no libcudart needed where it runs), and ptxas reporting registers and
# spills per kernel, with a spill or local-memory use failing the build.
function(gpuraid_cuda_target tgt)
  set_target_properties(${tgt} PROPERTIES
    CUDA_ARCHITECTURES "75-real;80-real;86-real;89-real;90-real;90-virtual"
    # CMake 3.25 knows no C++20 flag for nvcc; the .cu sources need only C++17.
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CUDA_RUNTIME_LIBRARY Static)
  target_compile_options(${tgt} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:--resource-usage -Xptxas=-warn-spills,-warn-lmem-usage,-Werror>)
endfunction()
