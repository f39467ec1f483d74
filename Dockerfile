# The image of the pipeline's components on Kubeflow Pipelines / Vertex AI (pipeline/kubeflow_v2_runner.py --image).
# TFX 1.16 declares python<3.11 but runs on 3.11 with the pinned constraints (README: Why TFX 1.16 on Python 3.11).
# Build with BuildKit (the default of Docker 23+): docker build -t IMAGE .

# Stage 1: every dependency as a wheel. pyfarmhash (TFDV's) is published as source only for Python 3.11, so this
# stage has a compiler; the image below does not keep it.
FROM python:3.11-slim AS wheels
RUN apt-get update && apt-get install -y --no-install-recommends build-essential \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
COPY pyproject.toml constraints.txt ./
RUN python -c "import tomllib; print(*tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies'], sep='\n')" \
        > requirements.txt \
    && pip wheel --no-cache-dir --ignore-requires-python --wheel-dir /wheels -c constraints.txt -r requirements.txt

# Stage 2: the dependencies from those wheels (a layer that a change to the code does not rebuild), then the code.
FROM python:3.11-slim
WORKDIR /app
RUN --mount=type=bind,from=wheels,source=/wheels,target=/wheels \
    --mount=type=bind,from=wheels,source=/build,target=/build \
    pip install --no-cache-dir --no-index --find-links /wheels --ignore-requires-python \
        -c /build/constraints.txt -r /build/requirements.txt
COPY . /app
RUN pip install --no-cache-dir --no-deps --ignore-requires-python . \
    && dialog --help > /dev/null
