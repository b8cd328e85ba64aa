"""Production Spark is the resource production builds (not a side YAML): Kubernetes executors, Dataproc jobs."""

from pathlib import Path

import pytest
import yaml
from dagster_gcp import DataprocResource

from marin_assets.resources.environments import resources_for

DEPLOYMENTS = Path(__file__).resolve().parents[2] / "deployments"
VALUES = yaml.safe_load((DEPLOYMENTS / "helm" / "values.yaml").read_text())
RUN_ENV = {e["name"]: e for e in VALUES["dagster-user-deployments"]["deployments"][0]["env"]}


@pytest.fixture
def production_env(monkeypatch):
    for name, entry in RUN_ENV.items():
        if "value" in entry:
            monkeypatch.setenv(name, entry["value"])
    monkeypatch.setenv("POD_IP", "10.4.2.7")  # what the fieldRef gives the step pod


def test_production_spark_runs_executors_on_kubernetes_calling_back_the_pod_ip(production_env):
    spark = resources_for("production")["spark"].process_config_and_initialize()
    conf = spark.session_conf()
    assert spark.master == RUN_ENV["MARIN_SPARK_MASTER"]["value"] and spark.master.startswith("k8s://")
    assert conf["spark.kubernetes.container.image"] == RUN_ENV["MARIN_SPARK_EXECUTOR_IMAGE"]["value"]
    assert conf["spark.kubernetes.namespace"] == RUN_ENV["MARIN_SPARK_NAMESPACE"]["value"]
    assert conf["spark.kubernetes.authenticate.driver.serviceAccountName"] == VALUES["serviceAccount"]["name"]
    assert conf["spark.driver.host"] == "10.4.2.7" and RUN_ENV["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    # Executors run the interpreter of the images' locked environment.
    dockerfile = (DEPLOYMENTS / "docker" / "Dockerfile.orchestrator").read_text()
    assert conf["spark.pyspark.python"] == "/opt/marin/.venv/bin/python"
    assert "UV_PROJECT_ENVIRONMENT=/opt/marin/.venv" in dockerfile
    assert all(key.startswith("spark.") and isinstance(value, str) for key, value in conf.items())


def test_production_spark_refuses_to_start_without_the_pod_ip(production_env, monkeypatch):
    monkeypatch.delenv("POD_IP")
    spark = resources_for("production")["spark"].process_config_and_initialize()
    with pytest.raises(ValueError, match="POD_IP"):
        spark.session_conf()


def test_production_cleans_on_the_dataproc_cluster_of_dataproc_yaml(production_env):
    runner = resources_for("production")["cleaning_runner"]
    assert runner.backend == RUN_ENV["MARIN_SPARK_BACKEND"]["value"] == "dataproc"
    assert runner.dataproc.pipes_bucket == RUN_ENV["MARIN_PIPES_BUCKET"]["value"]
    spec = runner.dataproc.spec()
    resource = spec.cluster_resource()  # the whole cluster section is dagster_gcp.DataprocResource's config
    assert isinstance(resource, DataprocResource) and resource.cluster_name == spec.cluster_name
    assert resource.cluster_config_dict["workerConfig"]["numInstances"] >= 2
    # the Dataproc nodes run the same locked environment as the Kubernetes executors
    k8s_conf = resources_for("production")["spark"].process_config_and_initialize().session_conf()
    assert spec.job_properties()["spark.pyspark.python"] == k8s_conf["spark.pyspark.python"]


@pytest.mark.parametrize("master", ["local[2]", "local[*]"])
def test_a_local_driver_runs_a_c1_only_jit_uncompressed_shuffles_and_a_users_settings_win(master):
    from marin_assets.resources.spark import SparkResource

    conf = SparkResource(master=master).session_conf()
    assert conf["spark.driver.extraJavaOptions"] == "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseParallelGC"
    assert conf["spark.shuffle.compress"] == conf["spark.sql.inMemoryColumnarStorage.compressed"] == "false"
    assert conf["spark.python.daemon.module"] == "marin_assets.core.spark_daemon"
    own = SparkResource(master=master, conf={"spark.driver.extraJavaOptions": "-Xss4m",
                                             "spark.shuffle.compress": "true"}).session_conf()  # fmt: skip
    assert own["spark.driver.extraJavaOptions"] == "-Xss4m" and own["spark.shuffle.compress"] == "true"


LOCAL_ONLY = ("extraJavaOptions", "spark.shuffle.compress", "inMemoryColumnarStorage", "daemon.module")


@pytest.mark.parametrize("master", ["spark://127.0.0.1:7077", "spark://10.0.0.5:7077"])
def test_a_cluster_keeps_the_default_jit_and_compression_and_a_users_flags_pass_through(master):
    from marin_assets.resources.spark import SparkResource

    assert not any(part in key for key in SparkResource(master=master).session_conf() for part in LOCAL_ONLY)
    own = SparkResource(master=master, conf={"spark.executor.extraJavaOptions": "-XX:TieredStopAtLevel=1"}).session_conf()
    assert own["spark.executor.extraJavaOptions"] == "-XX:TieredStopAtLevel=1"


def test_production_k8s_conf_keeps_the_jvm_defaults(production_env):
    k8s_conf = resources_for("production")["spark"].process_config_and_initialize().session_conf()
    assert not any(part in key for key in k8s_conf for part in LOCAL_ONLY)


def test_the_running_local_session_uses_the_local_jvm_settings(spark):
    jvm = spark.sparkContext._jvm
    flags = list(jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert spark.sparkContext.master.startswith("local")
    assert "-XX:TieredStopAtLevel=1" in flags and "-XX:+UseParallelGC" in flags
    # C1 alone would reserve 48 MB of code cache, which a long driver fills (then the JIT stops)
    diagnostic = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    assert int(diagnostic.getVMOption("ReservedCodeCacheSize").getValue()) == 240 * 2**20
    assert spark.conf.get("spark.shuffle.compress") == "false"


def test_local_python_workers_import_pyspark_from_the_installed_package_not_from_the_zip(spark):
    import pyspark

    def where(_):
        import sys

        import pyspark as worker_pyspark

        yield worker_pyspark.__file__, [p for p in sys.path if p.endswith(".zip")]

    (file, zips), *_ = spark.sparkContext.parallelize([0], 1).mapPartitions(where).collect()
    assert file == pyspark.__file__ and ".zip" not in file
    assert any(z.endswith("pyspark.zip") for z in zips)  # still on the path, behind the package


def test_only_zips_inside_an_importable_pyspark_package_move_behind_it():
    from marin_assets.core.spark_daemon import demote_installed_zips

    site = "/env/lib/python3.12/site-packages"
    zips = [f"{site}/pyspark/python/lib/pyspark.zip", f"{site}/pyspark/python/lib/py4j-0.10.9.9-src.zip"]
    path = ["", *zips, "/usr/lib/python312.zip", site]
    demote_installed_zips(path)
    assert path == ["", "/usr/lib/python312.zip", site, *zips]
    other = ["/opt/spark/python/lib/pyspark.zip", site]  # another Spark's SPARK_HOME: its pyspark stays first
    demote_installed_zips(other)
    assert other == ["/opt/spark/python/lib/pyspark.zip", site]
    not_importable = [f"{site}/pyspark/python/lib/pyspark.zip"]  # the package's folder is not on the path
    demote_installed_zips(not_importable)
    assert not_importable == [f"{site}/pyspark/python/lib/pyspark.zip"]
