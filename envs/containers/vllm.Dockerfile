# Generated from envs/vllm/requirements.lock by `make lock` (or `make envs`); do not edit by hand.
# Build from the repository root: docker build -f envs/containers/vllm.Dockerfile -t lalmbench-vllm envs  (context envs/: pins only)
# Base python:3.11-slim, not a CUDA image: PyPI's Linux x86_64 torch wheels bundle the CUDA runtime
# (nvidia-* wheels), so only the host's NVIDIA driver is needed; the image is smaller. The tag follows
# Python 3.11 patch releases: pin a digest (name@sha256:...) for a bit-identical base.
# Hugging Face cache: mount it and point HF_HOME at it, e.g.
#   docker run --gpus all -v "$HF_HOME":/hf -e HF_HOME=/hf -v "$PWD":/repo -w /repo lalmbench-vllm python scripts/generate.py ...
# HF_HUB_OFFLINE is deliberately not set (downloads work by default); set it to 1 on nodes without network.
# Installs envs/vllm/requirements.lock (sha256 c2e6f47fa806c2b91e602d8ff2c05b1ffc068c1efce745e68ee811d965d116e5), compiled from these pins
# (envs/vllm/requirements.txt, sha256 2757926d16089af6f9a98e69520f3178155e73421933d0b9981ed6cbf58f5fba):
#   vllm==0.32.0
#   torch==2.13.0
#   torchaudio==2.11.0
#   torchvision==0.28.0
#   transformers==5.19.0
#   tokenizers==0.23.3
#   mistral-common[audio]==1.13.1
#   soundfile==0.14.0
#   numpy==2.3.5
#   pandas==3.1.1
#   pyarrow==26.0.1
#   scipy==1.17.1
#   PyYAML==6.0.3
#   jsonschema==4.26.0
#   tqdm==4.70.1
#   wandb==0.31.0
#   mlflow-skinny==3.17.2
FROM python:3.11-slim
LABEL lalmbench.env="vllm" \
      lalmbench.requirements.sha256="2757926d16089af6f9a98e69520f3178155e73421933d0b9981ed6cbf58f5fba" \
      lalmbench.lock.sha256="c2e6f47fa806c2b91e602d8ff2c05b1ffc068c1efce745e68ee811d965d116e5"
ENV PYTHONUNBUFFERED=1
COPY vllm/requirements.lock /opt/lalmbench/requirements.lock
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/* \
 && python -m pip install --no-cache-dir --require-hashes -r /opt/lalmbench/requirements.lock \
 && python -m pip check
CMD ["python"]
