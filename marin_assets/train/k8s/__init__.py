"""Launch MaxText on every host of a GKE TPU slice (Indexed Job / JobSet), with Pipes through GCS.

`TpuPodLauncher` (the Dagster resource) is imported lazily: `pod_pipes` runs inside the training
image, which has dagster-pipes but not dagster, and importing it must not pull dagster in.
"""

__all__ = ["TpuPodLauncher", "SliceClient", "SliceFailed", "LaunchRequest", "build_workload", "launch_on_tpu_slice"]


def __getattr__(name: str):
    if name == "TpuPodLauncher":
        from marin_assets.train.k8s.resource import TpuPodLauncher

        return TpuPodLauncher
    if name == "launch_on_tpu_slice":
        from marin_assets.train.k8s.training import launch_on_tpu_slice

        return launch_on_tpu_slice
    if name in ("SliceClient", "SliceFailed"):
        from marin_assets.train.k8s import launcher

        return getattr(launcher, name)
    if name in ("LaunchRequest", "build_workload"):
        from marin_assets.train.k8s import manifests

        return getattr(manifests, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
