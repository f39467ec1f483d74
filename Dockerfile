# The image of the pipeline's components on Kubeflow Pipelines / Vertex AI (pipeline/kubeflow_v2_runner.py --image).
# TFX 1.16 declares python<3.11 but runs on 3.11 with the pinned constraints (README: Why TFX 1.16 on Python 3.11).
FROM python:3.11-slim
WORKDIR /app
COPY . /app
RUN pip install --no-cache-dir --ignore-requires-python -c constraints.txt .
