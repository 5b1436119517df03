{
  "targets": [
    {
      "target_name": "jaxon_native",
      "sources": [
        "cuda/addon.c",
        "cuda/cpu_kernels.c",
        "cuda/cuda_alloc.c",
        "cuda/cuda_compile.c",
        "cuda/cuda_driver.c",
        "cuda/cuda_memory.c",
        "cuda/cuda_napi.c",
        "cuda/cuda_program.c",
        "cuda/cuda_runtime.c",
        "cuda/cuda_test_hooks.c"
      ],
      "cflags": ["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "libraries": ["-ldl", "-lpthread"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
