"""The terms-mcp binary driven over stdio by the official Python MCP SDK client (`mcp`, pinned in requirements.txt).

The same cases as tests/node: the tools listed; a payment signed by a second server (the mcp_signer example, a local
wallet) checked by terms-mcp against the vectors' bytes, and declined against other bytes; schema failures. Then
`terms-mcp --config` with a journal, a policy and a key: atr_budget, atr_history and atr_record.

Run by `.ci/run` as `python -m unittest discover -s tests/python -v` after
`cargo build --features mcp,host,local-signer --bin terms-mcp --example mcp_signer`.
"""

import base64
import json
import os
import pathlib
import re
import tempfile
import unittest

from mcp import Client, StdioServerParameters

ROOT = pathlib.Path(__file__).resolve().parents[2]
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
BIN = os.environ.get("TERMS_MCP_BIN", str(TARGET / "debug" / "terms-mcp"))
SIGNER = os.environ.get("TERMS_MCP_SIGNER_BIN", str(TARGET / "debug" / "examples" / "mcp_signer"))
VERSION = re.search(r'^version = "(.*)"$', (ROOT / "Cargo.toml").read_text(), re.M).group(1)
BUYER = json.loads((ROOT / "tests" / "vectors" / "buyer.json").read_text())
FIXED = BUYER["fixed"]
B1 = next(r for r in BUYER["rows"] if r["name"] == "B1")
EIP3009 = "x402/exact/eip155/eip3009"
KEY_ENV = "TERMS_MCP_PYTHON_KEY"


def base64_of(hex_text):
    return base64.b64encode(bytes.fromhex(hex_text)).decode()


def server(command, *args, env=None):
    return Client(StdioServerParameters(command=command, args=list(args), env=env))


class TermsMcp(unittest.IsolatedAsyncioTestCase):
    async def call(self, client, name, arguments):
        """Calls a tool, and checks that the text of its one block is the JSON of its structured content."""
        r = await client.call_tool(name, arguments)
        self.assertEqual(len(r.content), 1)
        self.assertEqual(r.content[0].type, "text")
        self.assertEqual(json.loads(r.content[0].text), r.structured_content)
        return r

    async def test_server_info_and_the_five_tools(self):
        async with server(BIN) as terms:
            info = terms.server_info
            self.assertEqual((info.name, info.version), ("integraledger-terms", VERSION))
            capabilities = terms.server_capabilities.model_dump(exclude_none=True)
            self.assertEqual(capabilities, {"tools": {}})
            tools = (await terms.list_tools()).tools
            self.assertEqual(
                sorted(t.name for t in tools),
                ["atr_channel_open", "atr_channel_record_charge", "atr_check", "atr_confirm", "atr_finish"],
            )
            confirm = next(t for t in tools if t.name == "atr_confirm")
            self.assertEqual(len(confirm.input_schema["properties"]["pairing"]["enum"]), 67)

    async def test_a_payment_signed_by_another_server_checks_against_the_vectors_bytes(self):
        async with server(SIGNER) as signer, server(BIN) as terms:
            self.assertEqual(len((await signer.list_tools()).tools), 9)
            paid = await self.call(signer, "atr_transact", {"pairing": EIP3009, "document": FIXED["D"]})
            self.assertFalse(paid.is_error)
            self.assertEqual(paid.structured_content["atrHash"], B1["expect"]["h"])
            signed = paid.structured_content["signed"]
            self.assertEqual(signed["payload"]["authorization"]["nonce"], B1["expect"]["h"])

            ok = await self.call(
                terms, "atr_check", {"pairing": EIP3009, "atr": base64_of(FIXED["A"]), "presented": signed}
            )
            self.assertFalse(ok.is_error)
            self.assertEqual(ok.structured_content, {"atrHash": B1["expect"]["h"]})

            other = await self.call(
                terms, "atr_check", {"pairing": EIP3009, "atr": base64_of(FIXED["C"]), "presented": signed}
            )
            self.assertTrue(other.is_error)
            self.assertEqual(other.structured_content["decline"]["code"], "signed-not-bound")

    async def test_arguments_outside_the_schema_fail_it(self):
        cases = [
            ({"pairing": EIP3009, "atr": "/x==", "presented": {}}, "atr"),
            ({"pairing": EIP3009, "atr": "/w", "presented": {}}, "atr"),
            ({"pairing": "x402/exact/nowhere", "atr": "/w==", "presented": {}}, "pairing"),
            ({"pairing": EIP3009, "atr": "/w=="}, "presented"),
        ]
        async with server(BIN) as terms:
            for arguments, argument in cases:
                r = await self.call(terms, "atr_check", arguments)
                self.assertTrue(r.is_error, arguments)
                self.assertEqual(r.structured_content["invalid"]["argument"], argument, arguments)
                self.assertIsInstance(r.structured_content["invalid"]["reason"], str)

    async def test_config_journal_policy_and_key(self):
        option = FIXED["D"]["accepts"][0]
        network, asset = option["network"], option["asset"]
        with tempfile.TemporaryDirectory() as folder:
            folder = pathlib.Path(folder)
            (folder / "policy.toml").write_text(
                f'resources = ["*"]\nnetworks = ["{network}"]\n\n[[assets]]\nnetwork = "{network}"\n'
                f'address = "{asset}"\nsymbol = "USDC"\ndecimals = 6\ncap = "1000000"\n\n[[budgets]]\n'
                f'name = "day"\nasset = "{network}/{asset}"\nwindow = "day"\nlimit = "5000000"\n'
            )
            (folder / "config.toml").write_text(
                f'journal = "journal.db"\npolicy = "policy.toml"\nkey_env = "{KEY_ENV}"\nnetwork = "{network}"\n'
            )
            env = {KEY_ENV: FIXED["payerKey"]}
            async with server(BIN, "--config", str(folder / "config.toml"), env=env) as terms:
                names = [t.name for t in (await terms.list_tools()).tools]
                for name in ["atr_transact", "atr_agree", "atr_channel_within", "atr_budget", "atr_history"]:
                    self.assertIn(name, names)
                self.assertIn("atr_record", names)
                self.assertIn("atr_pay", names)

                budget = (await self.call(terms, "atr_budget", {})).structured_content
                row = budget["budgets"][0]
                self.assertEqual((row["budget"], row["window"]), ("day", "day"))
                self.assertEqual((row["limit"], row["spent"], row["remaining"]), ("5000000", "0", "5000000"))
                hourly = (await self.call(terms, "atr_budget", {"window": "hour"})).structured_content
                self.assertEqual(hourly["budgets"][0]["windowSeconds"], 3600)

                self.assertEqual((await self.call(terms, "atr_history", {})).structured_content, {"records": []})
                none = await self.call(terms, "atr_record", {"key": "no-such-purchase"})
                self.assertEqual(none.structured_content, {"record": None})

                # atr_pay holds the paid URL to the public-only rule: declined before any connection.
                for url in ["http://example.com/paid", "https://127.0.0.1/paid", "https://10.0.0.1/paid"]:
                    r = await self.call(terms, "atr_pay", {"url": url})
                    self.assertTrue(r.is_error, url)
                    self.assertEqual(r.structured_content["decline"]["code"], "url-refused", url)

                for tool, arguments, argument in [
                    ("atr_history", {"limit": 0}, "limit"),
                    ("atr_budget", {"window": "week"}, "window"),
                    ("atr_record", {}, "key"),
                ]:
                    r = await self.call(terms, tool, arguments)
                    self.assertTrue(r.is_error, (tool, arguments))
                    self.assertEqual(r.structured_content["invalid"]["argument"], argument)
            self.assertTrue((folder / "journal.db").exists(), "the journal beside the file")


if __name__ == "__main__":
    unittest.main()
