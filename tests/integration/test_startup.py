"""What the gateway loads before it says it is ready: the Chinese segmenter's dictionary (about a second on first
use) is loaded at start-up, so the first Chinese request after a start does not pay for it."""
from litestar.testing import TestClient

from gateway.app import create_app
from gateway.settings import Settings
from tests.conftest import ADMIN_TOKEN, fresh_dirs
from validator.alignment import posseg


def test_the_segmenter_is_loaded_before_the_gateway_is_ready(demo_backend):
    posseg.cache_clear()
    dirs = fresh_dirs()
    settings = Settings(backend_url=demo_backend.url + "/v1", admin_token=ADMIN_TOKEN, ready_delay_s=0.0,
                        data_dir=dirs["SEMCACHE_DATA_DIR"], models_dir=dirs["SEMCACHE_MODELS_DIR"])
    assert posseg.cache_info().currsize == 0
    with TestClient(create_app(settings)) as client:
        assert client.get("/readyz").status_code == 200
        assert posseg.cache_info().currsize == 1          # loaded by start-up, before any chat request
