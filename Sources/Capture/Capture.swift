import CPcap
