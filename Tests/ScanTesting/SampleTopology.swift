import ScanReconciliation

/// The topologies the reconciliation tests share.
public enum SampleTopology {
    /// dc1's lane L1: cam-1, then cam-2 1.5 s later, with the default window (1 s) and grace (2 s),
    /// so a pass is due when both saw it or when the lane's watermark is 4.5 s past its time at
    /// cam-1; and the given pack stations.
    public static func laneL1(stations: [Topology.Station] = []) -> Topology {
        Topology(sites: [
            Topology.Site(
                id: "dc1",
                lanes: [
                    Topology.Lane(
                        id: "L1",
                        cameras: [
                            Topology.LaneCamera(id: "cam-1", offsetMilliseconds: 0),
                            Topology.LaneCamera(id: "cam-2", offsetMilliseconds: 1_500),
                        ])
                ], stations: stations)
        ])
    }
}
