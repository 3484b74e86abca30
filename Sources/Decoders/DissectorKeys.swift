import Wire

/// HCI commands that carry an LTK in the clear (Core Vol 4 Part E 7.8.24, 7.8.25).
enum HCIKeyCommands {
    /// HCI_LE_Enable_Encryption: Connection_Handle, Random_Number(8), Encrypted_Diversifier(2), Long_Term_Key(16).
    static let leEnableEncryption: UInt16 = 0x2019
    /// HCI_LE_Long_Term_Key_Request_Reply: Connection_Handle, Long_Term_Key(16).
    static let leLongTermKeyRequestReply: UInt16 = 0x201A
    /// HCI_LE_Add_Device_To_Resolving_List (7.8.38): Peer_Identity_Address_Type,
    /// Peer_Identity_Address(6), Peer_IRK(16), Local_IRK(16).
    static let leAddDeviceToResolvingList: UInt16 = 0x2027
}

/// Keys from SMP and HCI: the legacy pairing recovery on sniffed links, key distribution, and the
/// LTKs hosts hand their controllers. Runs only on the frames that carry them.
extension Dissector {
    /// An SMP PDU on `c`: over the air it feeds the link's legacy pairing exchange and teaches the
    /// link-layer tracker distributed LTKs; everywhere its distributed keys are recorded.
    func smpKeys(_ pdu: SMPPDU, from side: Side, on c: Connection, _ d: inout Decoded, frame n: Int) {
        guard let command = pdu.command else { return }
        let index = d.linkLayer?.connection
        switch command {
        case .pairingRequest, .pairingResponse, .pairingConfirm, .pairingRandom, .pairingPublicKey, .pairingDHKeyCheck:
            guard let index else { return }
            // A new Pairing Request starts a new exchange; other PDUs join the running one.
            if case .pairingRequest = command { pairingExchanges[index] = nil }
            let exchange: PairingExchange
            if let e = pairingExchanges[index] {
                exchange = e
            } else {
                guard pairingExchanges.count < LinkLayerTracker.maxConnections else { return }
                exchange = PairingExchange(frame: n)
                pairingExchanges[index] = exchange
            }
            if exchange.feed(pdu, fromCentral: side == .local, frame: n) {
                if exchange.isSecureConnections {
                    derive(exchange, index: index, connection: c, &d)
                } else {
                    recover(exchange, index: index, connection: c, &d)
                }
            }
        case .encryptionInformation(let ltk):
            guard let block = Block128(lsbFirst: ltk) else { return }
            var link: LinkKey?
            if index != nil, let key = LTK(msbFirst: block.msbFirst) {
                let k = LinkKey(key, origin: .distributed(by: side == .local ? "central" : "peripheral", frame: n))
                linkLayer.add(k)
                link = k
            }
            reveal(RevealedKey(.ltk, value: block, frames: n...n, connection: c.id, source: "SMP Encryption Information",
                               sender: sender(side, c, d.linkLayer), linkKey: link), side: side)
        case .centralIdentification(let ediv, let rand):
            update(.ltk, connection: c.id, side: side) { k in
                k.ediv = ediv
                k.rand = rand
                k.addFrame(n)
                k.linkKey?.ediv = ediv
                k.linkKey?.rand = rand
            }
        case .identityInformation(let irk):
            guard let block = Block128(lsbFirst: irk) else { return }
            reveal(RevealedKey(.irk, value: block, frames: n...n, connection: c.id, source: "SMP Identity Information",
                               sender: sender(side, c, d.linkLayer)), side: side)
        case .identityAddressInformation(let type, let address):
            let k = update(.irk, connection: c.id, side: side) { k in
                k.identityAddress = address
                k.identityAddressType = type
                k.addFrame(n)
            }
            // The IRK and its identity complete each other (3.6.4, 3.6.5): from now on the
            // device's resolvable private addresses resolve to this identity.
            if let k {
                resolver.add(IdentityKey(irk: k.block, identity: IdentityAddress(address, type: type),
                                         origin: "SMP Identity Information", frame: k.firstFrame))
            }
        case .signingInformation(let csrk):
            guard let block = Block128(lsbFirst: csrk) else { return }
            reveal(RevealedKey(.csrk, value: block, frames: n...n, connection: c.id, source: "SMP Signing Information",
                               sender: sender(side, c, d.linkLayer)), side: side)
        default:
            break
        }
    }

    /// Who sent a key and how it was read: over the air the central sends C→P (`.local`); in an
    /// HCI log, this host or its peer.
    private func sender(_ side: Side, _ c: Connection, _ ll: LLFrame?) -> KeySender {
        if let ll {
            let who: KeySender.Who = side == .local ? .central : .peripheral
            switch ll.encryption {
            case .decrypted: return KeySender(who: who, how: .decrypted)
            case .decryptedBySniffer: return KeySender(who: who, how: .decryptedBySniffer)
            case .decryptedInCapture: return KeySender(who: who, how: .decryptedInCapture)
            case .none, .encrypted: return KeySender(who: who, how: .overTheAir)
            }
        }
        switch (side, c.isCentral) {
        case (.local, true?), (.remote, false?): return KeySender(who: .central, how: .hciACL)
        case (.local, false?), (.remote, true?): return KeySender(who: .peripheral, how: .hciACL)
        case (.local, nil): return KeySender(who: .thisHost, how: .hciACL)
        case (.remote, nil): return KeySender(who: .peer, how: .hciACL)
        }
    }

    /// An LL_ENC_REQ on a link whose legacy pairing is still waiting for a value: the sniffer
    /// missed it, and the encryption starts now, so the pairing is worked on with what there is.
    func encryptionRequested(index: Int, connection c: Connection, _ d: inout Decoded) {
        guard let e = pairingExchanges[index], !e.finished else { return }
        if e.isSecureConnections {
            derive(e, index: index, connection: c, &d)
        } else {
            recover(e, index: index, connection: c, &d)
        }
    }

    /// Works out the LTK of a finished LE Secure Connections pairing when one side's private key is
    /// known (the debug key, or one given); the LTK goes to the tracker for the LL_ENC_REQ.
    private func derive(_ exchange: PairingExchange, index: Int, connection c: Connection, _ d: inout Decoded) {
        let addresses = linkLayer.connectRequest(of: index).map {
            (ia: $0.connect.initA, iatRandom: $0.initiatorRandom, ra: $0.connect.advA, ratRandom: $0.advertiserRandom)
        }
        let frames = exchange.firstFrame...exchange.lastFrame
        let method = exchange.methodName
        switch exchange.deriveSecureConnections(addresses: addresses, privateKeys: privateKeys) {
        case .derived(let ltk, let centralKeyKnown, let debugKey):
            guard let key = LTK(msbFirst: ltk.msbFirst) else { return }
            let whose = (centralKeyKnown ? "the central's" : "the peripheral's") + (debugKey ? " debug private key" : " given private key")
            let link = LinkKey(key, origin: .secureConnections(method: method, debugKey: debugKey, centralKeyKnown: centralKeyKnown, frames: frames),
                               connection: index)
            linkLayer.add(link)
            d.keyNote = "LE Secure Connections " + method + " pairing: " + whose + " gives the DHKey, LTK " + key.description
            var k = RevealedKey(.ltk, value: ltk, frames: frames, connection: c.id,
                                source: "f5 of the LE Secure Connections " + method + " pairing's DHKey, from " + whose, linkKey: link)
            k.secureConnections = true
            k.ediv = 0
            k.rand = 0
            reveal(k, side: nil)
        case .noPrivateKey:
            d.keyNote = "LE Secure Connections " + method + " pairing: neither side used the debug key" +
                (privateKeys.isEmpty ? "; a passive listener cannot work out its LTK (give the LTK, or a private key in a keys file)"
                    : " and no given private key matches its public keys")
        case .invalidPublicKey:
            d.keyNote = "LE Secure Connections pairing: a Pairing Public Key is not a point of P-256"
        case .missing(let what):
            d.keyNote = "LE Secure Connections pairing: cannot derive the LTK, the sniffer missed " + what.joined(separator: ", ")
        }
    }

    /// Works out the TK and STK of a finished legacy pairing; the STK goes to the tracker for the
    /// LL_ENC_REQ that follows.
    private func recover(_ exchange: PairingExchange, index: Int, connection c: Connection, _ d: inout Decoded) {
        let addresses = linkLayer.connectRequest(of: index).map {
            (ia: $0.connect.initA, iatRandom: $0.initiatorRandom, ra: $0.connect.advA, ratRandom: $0.advertiserRandom)
        }
        let frames = exchange.firstFrame...exchange.lastFrame
        switch exchange.recover(addresses: addresses, givenTKs: temporaryKeys) {
        case .recovered(let tk, let passkey, let tkGiven, let reversed, let stk):
            guard let stkKey = LTK(msbFirst: stk.msbFirst) else { return }
            let method = exchange.methodName
            let link = LinkKey(stkKey, origin: .legacyPairing(method: method, passkey: passkey, tkGiven: tkGiven, frames: frames),
                               connection: index)
            linkLayer.add(link)
            let how: String
            if tkGiven {
                how = "the given TK " + (LTK(msbFirst: tk.msbFirst)?.description ?? "") + (reversed ? " (its octets reversed)" : "") + " matches"
            } else if case .passkeyEntry? = exchange.method {
                how = "passkey " + LinkKey.passkeyText(passkey ?? 0)
            } else {
                how = passkey == 0 ? "TK 0" : "passkey " + LinkKey.passkeyText(passkey ?? 0)
            }
            d.keyNote = "LE legacy " + method + " pairing: " + how + (tkGiven ? "" : " found") + ", STK " + stkKey.description
            reveal(RevealedKey(.tk, value: tk, frames: frames, connection: c.id,
                               source: "LE legacy " + method + " pairing: " + (tkGiven ? "given TK checked against the confirm values" : "found from the confirm values"),
                               passkey: how.hasPrefix("passkey") ? passkey : nil), side: nil)
            reveal(RevealedKey(.stk, value: stk, frames: frames, connection: c.id,
                               source: "s1(TK, Srand, Mrand) of the LE legacy " + method + " pairing", linkKey: link), side: nil)
        case .tkMissing:
            d.keyNote = temporaryKeys.isEmpty ? "LE legacy OOB pairing: TK missing (give it with --tk to decrypt the link)"
                : "LE legacy OOB pairing: TK missing, no given TK matches the confirm values"
        case .notFound:
            d.keyNote = "LE legacy " + exchange.methodName + " pairing: no passkey 000000-999999 gives the confirm values" +
                (temporaryKeys.isEmpty ? "" : ", nor a given TK")
        case .missing(let what):
            d.keyNote = "LE legacy pairing: cannot recover the STK, the sniffer missed " + what.joined(separator: ", ")
        }
    }

    /// An LTK the host hands its controller in the clear.
    func hciKey(opcode: UInt16, _ params: Bytes, adapter: UInt16, frame n: Int) {
        let enable = opcode == HCIKeyCommands.leEnableEncryption
        guard params.count >= (enable ? 28 : 18), let handle = params.le16(0),
              let ltk = Block128(lsbFirst: params.from(enable ? 12 : 2).prefix(16)) else { return }
        let c = liveConnection(adapter: adapter, handle: handle)
        var ediv: UInt16?, rand: UInt64?
        if enable {
            rand = params.le64(at: 2)
            ediv = params.le16(at: 10)
        } else if let req = ltkRequests.removeValue(forKey: key(adapter, handle & 0x0FFF)) {
            ediv = req.ediv
            rand = req.rand
        }
        // EDIV and Rand 0 name the key of the pairing just run: an STK after legacy pairing, the
        // LTK under LE Secure Connections.
        let pairing = c?.pairing.current
        let fresh = ediv == 0 && rand == 0 && pairing?.response != nil
        let kind: RevealedKey.Kind = fresh && pairing?.secureConnections == false && pairing?.keysFromResponder.contains(.encKey) == false
            && pairing?.keysFromInitiator.contains(.encKey) == false ? .stk : .ltk
        var k = RevealedKey(kind, value: ltk, frames: n...n, connection: c?.id,
                            source: enable ? "HCI LE Enable Encryption command" : "HCI LE Long Term Key Request Reply command")
        k.ediv = ediv
        k.rand = rand
        k.secureConnections = fresh && pairing?.secureConnections == true
        reveal(k, side: nil)
    }

    private func reveal(_ k: RevealedKey, side: Side?) {
        guard revealedKeys.count < Dissector.maxRevealedKeys else { return }
        var k = k
        k.side = side
        revealedKeys.append(k)
    }

    /// Adds what a later PDU says (EDIV and Rand, an identity address) to the latest key of that
    /// kind the same side sent on the connection.
    /// Returns the key as updated, nil when there was none.
    @discardableResult
    private func update(_ kind: RevealedKey.Kind, connection: Int, side: Side, _ body: (inout RevealedKey) -> Void) -> RevealedKey? {
        var i = revealedKeys.count - 1
        let stop = max(0, revealedKeys.count - 16)
        while i >= stop {
            if revealedKeys[i].kind == kind, revealedKeys[i].connection == connection, revealedKeys[i].side == side {
                body(&revealedKeys[i])
                return revealedKeys[i]
            }
            i -= 1
        }
        return nil
    }

    /// A peer's IRK and identity the host hands its controller so that the controller resolves
    /// the peer's addresses (HCI LE Add Device To Resolving List): the same knowledge, in the
    /// clear in any HCI log. An all-zero Peer_IRK means the peer has none (7.8.38).
    func resolvingListEntry(_ params: Bytes, frame n: Int) {
        // Length checked: the reads below stay inside the parameters.
        guard params.count >= 39, let type = params.byte(0),
              let irk = Block128(lsbFirst: params.from(7).prefix(16)) else { return }
        let address = BDAddr(UInt64(params.le32(at: 1)) | UInt64(params.le16(at: 5)) << 32)
        guard irk != Block128(repeating: 0) else { return }
        let id = IdentityAddress(address, type: type)
        guard resolver.add(IdentityKey(irk: irk, identity: id, origin: "HCI LE Add Device To Resolving List", frame: n)) else { return }
        var k = RevealedKey(.irk, value: irk, frames: n...n, connection: nil,
                            source: "HCI LE Add Device To Resolving List command")
        k.identityAddress = address
        k.identityAddressType = type & 1
        reveal(k, side: nil)
    }
}
