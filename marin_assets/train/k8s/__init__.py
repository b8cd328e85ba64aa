"""Launch MaxText on every host of a GKE TPU slice (Indexed Job / JobSet), with Pipes through GCS.

Import the submodules directly (`resource.TpuPodLauncher`, `training.launch_on_tpu_slice`,
`launcher.SliceClient`, `manifests.build_workload`): `pod_pipes` runs inside the training image,
which has dagster-pipes but not dagster, so this package imports nothing itself.
"""
