"""TpuPodLauncher: the Dagster resource that runs a command on every host of a TPU slice on GKE.

    invocation = tpu_launcher.run(context=context, command=[...], resources=spec.resources,
                                  run_name=spec.run_name, output_uri="gs://bucket/training")
    summary = invocation.get_custom_messages()[-1]

Pipes travels through GCS: the context is written to `pipes_bucket` before the pods start and
the lead pod's messages are read back from it while they run (see pod_pipes.py for the pod side).
The Kubernetes client (seconds to import) is loaded by a launch, not with the code location.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from marin_assets.core.gcs_client import gcs_client
from marin_assets.train.k8s.pod_pipes import PIPES_INTERVAL_ENV, PIPES_TRANSPORT_ENV
from marin_assets.train.hardware import ResourceConfig

if TYPE_CHECKING:
    from kubernetes import client as k8s


class TpuPodLauncher(dg.ConfigurableResource):
    namespace: str = "default"
    image: str = Field(description="Training image (deployments/docker/Dockerfile.tpu-train)")
    service_account: str | None = Field(default=None, description="KSA bound to a GCP SA (workload identity)")
    pipes_bucket: str = Field(description="GCS bucket for Pipes context and messages (no gs:// prefix)")
    in_cluster: bool = Field(default=True, description="Use the pod's service account token (dagster runs in GKE)")
    kubeconfig_file: str | None = Field(default=None, description="Used when in_cluster is false")
    api_host: str | None = Field(default=None, description="Override the API server URL (e.g. kubectl proxy)")
    poll_interval_s: float = 10.0
    pipes_interval_s: float = 10.0
    log_tail_lines: int = 40
    timeout_s: float | None = Field(default=None, description="Give up (and delete the slice) after this long")
    keep_finished: bool = Field(default=False, description="Leave finished Jobs/JobSets for inspection")
    secret_env: dict[str, str] = Field(
        default_factory=dict,
        description="Env vars every pod reads from a Kubernetes Secret, NAME: '<secret>/<key>' "
                    "(e.g. WANDB_API_KEY: 'wandb/api-key'); the values never pass through Dagster")

    def api_client(self) -> k8s.ApiClient:
        from kubernetes import client as k8s
        from kubernetes import config as k8s_config

        configuration = k8s.Configuration()
        if self.api_host is None:
            if self.in_cluster:
                k8s_config.load_incluster_config(client_configuration=configuration)
            else:
                k8s_config.load_kube_config(config_file=self.kubeconfig_file, client_configuration=configuration)
        else:
            configuration.host = self.api_host
        return k8s.ApiClient(configuration)

    def run(
        self,
        *,
        context: dg.AssetExecutionContext | dg.OpExecutionContext,
        command: Sequence[str],
        resources: ResourceConfig,
        run_name: str,
        output_uri: str,
        env: Mapping[str, str] | None = None,
        extras: Mapping[str, object] | None = None,
    ) -> dg.PipesClientCompletedInvocation:
        from dagster_gcp.pipes import PipesGCSContextInjector, PipesGCSMessageReader

        from marin_assets.train.k8s.launcher import SliceClient
        from marin_assets.train.k8s.manifests import LaunchRequest, build_workload

        gcs = gcs_client()
        launch_id = uuid.uuid4().hex[:8]  # fresh names per attempt: a step retry never meets the last one
        injector = PipesGCSContextInjector(bucket=self.pipes_bucket, client=gcs,
                                           key_prefix=f"pipes/{context.run.run_id}/{launch_id}")
        reader = PipesGCSMessageReader(bucket=self.pipes_bucket, client=gcs, interval=self.pipes_interval_s)
        with dg.open_pipes_session(context=context, context_injector=injector, message_reader=reader,
                                   extras=extras) as session:
            request = LaunchRequest(
                run_name=run_name, command=list(command), image=self.image, resources=resources,
                output_uri=output_uri, namespace=self.namespace, service_account=self.service_account,
                launch_id=launch_id, labels={"dagster/run-id": context.run.run_id}, secret_env=self.secret_env,
                env={**(env or {}), **session.get_bootstrap_env_vars(),
                     PIPES_TRANSPORT_ENV: "gcs", PIPES_INTERVAL_ENV: str(self.pipes_interval_s)},
            )
            workload = build_workload(request)
            SliceClient(self.api_client(), poll_interval_s=self.poll_interval_s, log_tail_lines=self.log_tail_lines,
                        timeout_s=self.timeout_s, keep_finished=self.keep_finished,
                        log=context.log.info, preemption_drain_s=resources.preemption_grace_s).run(workload)
        return dg.PipesClientCompletedInvocation(session)
