"""Standard Webhooks signing as docs/contract.md specifies it, checked on the specification's own example."""
import unittest

from kubeloop import signing

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
BODY = b'{"test": 2432232314}'
EXAMPLE = {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330", "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}


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
