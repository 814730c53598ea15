from __future__ import annotations

import threading

import httpx

from gacc_hf.methods.connections import Connections
from tests.helpers.usage_server import usage_server


def test_requests_one_after_another_share_one_client() -> None:
    with usage_server("sound") as server:
        connections = Connections(server.url, {}, 5.0, httpx.create_ssl_context())
        for _ in range(5):
            with connections.lend() as http:
                assert http.get("models").json()["data"][0]["id"] == "echo"
        assert connections.size == 1
        connections.close()


def test_requests_at_once_each_get_a_client_and_the_clients_are_kept() -> None:
    with usage_server("sound") as server:
        connections = Connections(server.url, {}, 5.0, httpx.create_ssl_context())
        together, lent = threading.Barrier(4), []

        def ask() -> None:
            with connections.lend() as http:
                lent.append(http)
                together.wait(5)  # all four hold a client at once
                http.get("models").raise_for_status()

        threads = [threading.Thread(target=ask) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert connections.size == 4 and len({id(h) for h in lent}) == 4
        with connections.lend() as http:  # an idle one is lent again, none made
            assert http in lent
        assert connections.size == 4
        connections.close()
        assert all(h.is_closed for h in lent)
