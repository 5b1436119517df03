{
  "targets": [
    {
      "target_name": "jaxon_native",
      "sources": [
        "cuda/addon.c",
        "cuda/cpu_kernels.c",
        "cuda/cuda_loader.c"
      ],
      "cflags": ["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter"],
      "libraries": ["-ldl"],
      "defines": ["NAPI_VERSION=8"]
    }
  ]
}
