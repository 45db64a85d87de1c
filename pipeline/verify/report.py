"""What verification says about one package: findings with reason codes, and the verdict."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pipeline.verify.codes import Code

VERIFIER_VERSION = "1"


class Finding(BaseModel):
    code: Code
    message: str
    step: int | None = None
    check: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class Verdict(BaseModel):
    id: str
    accepted: bool
    score: float | None = None
    codes: list[str] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    verifier_version: str = VERIFIER_VERSION

    @classmethod
    def build(cls, package_id: str, findings: list[Finding], score: float | None,
              notes: list[str] | None = None) -> Verdict:
        codes = list(dict.fromkeys(f.code.value for f in findings))
        return cls(id=package_id, accepted=not findings, score=score, codes=codes,
                   findings=findings, notes=notes or [])
