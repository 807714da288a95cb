"""The Faker providers scenario templates may call, and the one seeded Faker instance they share.

Only providers whose output depends on the seed alone are listed: none reads the clock
(``date``, ``time``, ``iso8601``, ``user_agent`` and the like are left out), the network or files.
Keyword arguments are literals of the listed type; sizes are bounded so that one template cannot
make a huge answer.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

__all__ = ["FAKER_LOCK", "FAKER_PROVIDERS", "shared_faker"]

_INT = (int,)
_BOOL = (bool,)
_STR = (str,)
_COUNT = (int, 0, 1000)
#: Allowed Faker providers → allowed keyword arguments → ``(type[, minimum, maximum])``.
FAKER_PROVIDERS: Mapping[str, Mapping[str, tuple[Any, ...]]] = {
    "address": {}, "bothify": {"text": _STR, "letters": _STR}, "boolean": {"chance_of_getting_true": (int, 0, 100)},
    "catch_phrase": {}, "city": {}, "color_name": {}, "company": {}, "country": {},
    "country_code": {"representation": _STR}, "currency_code": {}, "domain_name": {"levels": (int, 1, 10)},
    "email": {"safe": _BOOL, "domain": _STR}, "file_name": {"category": _STR, "extension": _STR},
    "file_path": {"depth": (int, 1, 20), "extension": _STR, "absolute": _BOOL}, "first_name": {},
    "hex_color": {}, "hostname": {"levels": (int, 0, 10)}, "ipv4": {"private": _BOOL}, "ipv6": {}, "job": {},
    "language_name": {}, "last_name": {}, "latitude": {}, "lexify": {"text": _STR, "letters": _STR},
    "license_plate": {}, "longitude": {}, "mac_address": {}, "md5": {}, "name": {}, "numerify": {"text": _STR},
    "paragraph": {"nb_sentences": _COUNT, "variable_nb_sentences": _BOOL}, "phone_number": {}, "postcode": {},
    "pyfloat": {
        "left_digits": (int, 0, 15), "right_digits": (int, 0, 15), "positive": _BOOL,
        "min_value": (float, -1e15, 1e15), "max_value": (float, -1e15, 1e15),
    },
    "pyint": {"min_value": _INT, "max_value": _INT, "step": (int, 1, 10**9)},
    "pystr": {"min_chars": _COUNT, "max_chars": _COUNT, "prefix": _STR, "suffix": _STR},
    "random_digit": {}, "random_int": {"min": _INT, "max": _INT, "step": (int, 1, 10**9)},
    "sentence": {"nb_words": _COUNT, "variable_nb_words": _BOOL}, "sha256": {}, "state": {}, "street_address": {},
    "text": {"max_nb_chars": (int, 5, 10_000)}, "user_name": {}, "uuid4": {}, "word": {}, "zipcode": {},
}  # fmt: skip


#: Serialises use of the shared Faker instance (seeding and drawing must not interleave).
FAKER_LOCK = threading.RLock()
_FAKER: list[Any] = []


def shared_faker() -> Any:
    """The shared ``Faker("en_US")`` instance, created on first use (hold :data:`FAKER_LOCK`)."""
    if not _FAKER:
        from faker import Faker

        _FAKER.append(Faker("en_US"))
    return _FAKER[0]
