# Sourced on the GPU host: puts the image's LibTorch and CUPTI libraries on LD_LIBRARY_PATH so
# a ftax binary built against the same torch version (here or there) runs.
torch_lib=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib"))')
cupti_dirs=$(ls -d /usr/local/cuda/extras/CUPTI/lib64 /usr/local/cuda/lib64 2>/dev/null | tr '\n' ':')
export LD_LIBRARY_PATH="$torch_lib:${cupti_dirs}${LD_LIBRARY_PATH:-}"
