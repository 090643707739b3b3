internal import CAravis

/// A GenICam camera Aravis sees: GigE Vision on the network, USB3 Vision on USB, or Aravis's
/// in-process fake camera when the Fake interface is enabled.
public struct GenICamDevice: Sendable, Equatable {
    /// What `GenICamCamera(id:)` takes: `VENDOR-SERIAL` for Aravis, or the address or serial.
    public var id: String
    public var vendor: String
    public var model: String
    public var serial: String
    /// An IP address (GigE Vision) or a USB bus address.
    public var address: String
    /// `GigEVision`, `USB3Vision` or `Fake`.
    public var interface: String
}

public enum GenICamDevices {
    /// Every camera found now (a GigE Vision discovery broadcast, a USB scan); `fake`: also
    /// Aravis's in-process fake camera (tests).
    public static func list(fake: Bool = false) -> [GenICamDevice] {
        if fake { arv_enable_interface("Fake") }
        arv_update_device_list()
        return (0..<arv_get_n_devices()).map { index in
            func text(_ value: UnsafePointer<CChar>?) -> String { value.map { String(cString: $0) } ?? "" }
            return GenICamDevice(
                id: text(arv_get_device_id(index)), vendor: text(arv_get_device_vendor(index)),
                model: text(arv_get_device_model(index)), serial: text(arv_get_device_serial_nbr(index)),
                address: text(arv_get_device_address(index)), interface: text(arv_get_device_protocol(index)))
        }
    }
}
