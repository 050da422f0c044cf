"""Standard Webhooks signing as docs/contract.md specifies it, checked on the specification's own example."""
import unittest

from kubeloop import signing

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
BODY = b'{"test": 2432232314}'
EXAMPLE = {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330", "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}


# docs/contract.md's worked example (Signed calls): the keys derived for Loop pod-name-label, and the signatures.
AUDIENCE = "loop/pod-name-label"
REQUEST_KEY = "21653aac44322ad942103cda8d4b8811556d4372f08fa814577932f5c5832504"
REPLY_KEY = "dc0eca6e3f0673ea7c9faf902e0c666aa08d3a8159480bf0997c71fb073b17e2"
REQUEST_SIGNATURE = "v1,iKp84Q5gTCMXTBLWRCdbfgAYxSv2kqOT575Db0wrMis="
REPLY_SIGNATURE = "v1,LqR8+U4tLRqVY2UfY2JYocnDOnbSnmjuaF8YcDohXlE="


class DerivedKeysTest(unittest.TestCase):
    def test_derives_the_contract_example_keys_and_signatures(self):
        keys = signing.parse_secrets(SECRET)
        self.assertEqual([k.hex() for k in signing.derive(keys, "request", AUDIENCE)], [REQUEST_KEY])
        self.assertEqual([k.hex() for k in signing.derive(keys, "reply", AUDIENCE)], [REPLY_KEY])
        request = {**EXAMPLE, "webhook-signature": REQUEST_SIGNATURE, signing.AUDIENCE_HEADER: AUDIENCE}
        self.assertEqual(signing.verify_request(keys, request, BODY, now=1614265330), (True, (EXAMPLE["webhook-id"], AUDIENCE)))
        reply = signing.sign_reply(keys, AUDIENCE, EXAMPLE["webhook-id"], BODY, now=1614265330)
        self.assertEqual(reply["webhook-signature"], REPLY_SIGNATURE)

    def test_refuses_a_request_without_audience_for_another_audience_or_signed_with_the_secret_or_reply_key(self):
        keys = signing.parse_secrets(SECRET)
        base = {**EXAMPLE, "webhook-signature": REQUEST_SIGNATURE}
        cases = [
            (base, "missing or malformed x-kubeloop-audience"),
            ({**base, signing.AUDIENCE_HEADER: "Loop/Pod"}, "missing or malformed x-kubeloop-audience"),
            ({**base, signing.AUDIENCE_HEADER: "loop/other"}, "no webhook-signature matches"),
            ({**EXAMPLE, signing.AUDIENCE_HEADER: AUDIENCE}, "no webhook-signature matches"),
            ({**EXAMPLE, "webhook-signature": REPLY_SIGNATURE, signing.AUDIENCE_HEADER: AUDIENCE}, "no webhook-signature matches"),
        ]
        for headers, message in cases:
            ok, detail = signing.verify_request(keys, headers, BODY, now=1614265330)
            self.assertFalse(ok)
            self.assertIn(message, detail)

    def test_accepts_a_namespaced_loop_audience_and_refuses_it_for_another_namespace(self):
        keys = signing.parse_secrets(SECRET)
        headers = {**signing.sign(signing.derive(keys, "request", "loop/team-a/labeller"), BODY), signing.AUDIENCE_HEADER: "loop/team-a/labeller"}
        ok, (_, audience) = signing.verify_request(keys, headers, BODY)
        self.assertTrue(ok)
        self.assertEqual(audience, "loop/team-a/labeller")
        self.assertFalse(signing.verify_request(keys, {**headers, signing.AUDIENCE_HEADER: "loop/team-b/labeller"}, BODY)[0])
        for malformed in ["loop/a/b/c", "loop//x", "loop/team-a/"]:
            self.assertIn("missing or malformed", signing.verify_request(keys, {**headers, signing.AUDIENCE_HEADER: malformed}, BODY)[1])


class SigningTest(unittest.TestCase):
    def test_signs_the_specification_example(self):
        keys = signing.parse_secrets(SECRET)
        self.assertEqual(signing.sign(keys, BODY, message_id=EXAMPLE["webhook-id"], now=1614265330), EXAMPLE)

    def test_verifies_a_fresh_signature_and_returns_its_id(self):
        self.assertEqual(signing.verify(signing.parse_secrets(SECRET), EXAMPLE, BODY, now=1614265330 + 299), (True, EXAMPLE["webhook-id"]))

    def test_refuses_stale_future_tampered_forged_and_missing_signatures(self):
        keys = signing.parse_secrets(SECRET)
        other = signing.parse_secrets("whsec_" + "A" * 32)
        cases = [
            (keys, EXAMPLE, BODY, 1614265330 + 301, "stale or replayed"),
            (keys, EXAMPLE, BODY, 1614265330 - 301, "in the future"),
            (keys, EXAMPLE, b'{"test": 2432232315}', 1614265330, "no webhook-signature matches"),
            (other, EXAMPLE, BODY, 1614265330, "no webhook-signature matches"),
            (keys, {"webhook-id": "msg_1"}, BODY, 1614265330, "missing signature"),
        ]
        for keys_, headers, body, now, message in cases:
            ok, detail = signing.verify(keys_, headers, body, now=now)
            self.assertFalse(ok)
            self.assertIn(message, detail)

    def test_accepts_any_key_during_a_rotation_and_signs_with_each(self):
        new = "whsec_" + "B" * 32
        keys = signing.parse_secrets(f"{new} {SECRET}")
        self.assertTrue(signing.verify(keys, EXAMPLE, BODY, now=1614265330)[0])
        self.assertEqual(len(signing.sign(keys, BODY)["webhook-signature"].split(" ")), 2)

    def test_rejects_secrets_that_are_not_whsec_base64_of_24_to_64_bytes(self):
        for bad in ["", "whsec_???", "whsec_" + "A" * 8, " ".join([SECRET] * 5)]:
            with self.assertRaises(signing.SigningSecretError):
                signing.parse_secrets(bad)


if __name__ == "__main__":
    unittest.main()
