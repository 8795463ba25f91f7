import CoasterHTTP
import HTTPTypes

/// The kinds of problem that are CoasterLife's own, beside the ones any HTTP service has
/// (CoasterHTTP's ``ProblemType``).
extension ProblemType {
    public static let invalidParkFile = Self(rawValue: "invalid-park-file")
    public static let invalidField = Self(rawValue: "invalid-field")
    public static let usernameTaken = Self(rawValue: "username-taken")
    public static let invalidCredentials = Self(rawValue: "invalid-credentials")
    public static let noSuchUser = Self(rawValue: "no-such-user")
    public static let cannotBefriendSelf = Self(rawValue: "cannot-befriend-self")
    public static let noPendingRequest = Self(rawValue: "no-pending-request")
    public static let notFriends = Self(rawValue: "not-friends")
    public static let notBlocked = Self(rawValue: "not-blocked")
    public static let friendLimit = Self(rawValue: "friend-limit")
    public static let noSuchRide = Self(rawValue: "no-such-ride")
    public static let checkinRefused = Self(rawValue: "checkin-refused")
    public static let rideRefused = Self(rawValue: "ride-refused")
    public static let rideCooldown = Self(rawValue: "ride-cooldown")
    public static let nearbyRefused = Self(rawValue: "nearby-refused")
    public static let reportRefused = Self(rawValue: "report-refused")
    public static let invalidPostedWaits = Self(rawValue: "invalid-posted-waits")
    public static let invalidPhoto = Self(rawValue: "invalid-photo")
    public static let noSuchPhoto = Self(rawValue: "no-such-photo")
    public static let photoTagNotVisited = Self(rawValue: "photo-tag-not-visited")
    public static let storeUnavailable = Self(rawValue: "store-unavailable")
    public static let invalidChallenge = Self(rawValue: "invalid-challenge")
    public static let noSuchChallenge = Self(rawValue: "no-such-challenge")
    public static let challengeRefused = Self(rawValue: "challenge-refused")
    public static let noSuchEntry = Self(rawValue: "no-such-entry")
    public static let invalidSearch = Self(rawValue: "invalid-search")
    public static let invalidCatalogFile = Self(rawValue: "invalid-catalog-file")
    public static let invalidList = Self(rawValue: "invalid-list")
    public static let noSuchList = Self(rawValue: "no-such-list")
    public static let noSuchListItem = Self(rawValue: "no-such-list-item")
    public static let listRefused = Self(rawValue: "list-refused")
    public static let cannotFollowSelf = Self(rawValue: "cannot-follow-self")
    public static let followLimit = Self(rawValue: "follow-limit")
    public static let invalidPost = Self(rawValue: "invalid-post")
    public static let noSuchPost = Self(rawValue: "no-such-post")
    public static let noSuchComment = Self(rawValue: "no-such-comment")

    /// Every kind of problem this service answers with; the OperationsAndSecurity article (docs:
    /// "Errors") lists the same.
    public static let all: [Self] = Self.generic + [
        .invalidParkFile, .invalidField, .usernameTaken, .invalidCredentials, .noSuchUser, .cannotBefriendSelf, .noPendingRequest,
        .notFriends, .notBlocked, .friendLimit, .noSuchRide, .checkinRefused, .rideRefused, .rideCooldown, .nearbyRefused,
        .reportRefused, .invalidPostedWaits, .invalidPhoto, .noSuchPhoto, .photoTagNotVisited,
        .storeUnavailable, .invalidChallenge, .noSuchChallenge, .challengeRefused, .noSuchEntry,
        .invalidSearch, .invalidCatalogFile, .invalidList, .noSuchList, .noSuchListItem, .listRefused,
        .cannotFollowSelf, .followLimit,
        .invalidPost, .noSuchPost, .noSuchComment,
    ]
}

extension Problem {
    /// 401, with the `WWW-Authenticate` challenge RFC 6750 asks for.
    public static func unauthorized(_ detail: String? = nil) -> Problem {
        var problem = Problem(.unauthorized, status: .unauthorized, title: "Authentication required",
                              detail: detail ?? "Log in with POST /v1/sessions and send Authorization: Bearer <token>.")
        problem.headers[.wwwAuthenticate] = "Bearer realm=\"coasterlife\""
        return problem
    }

    /// 400 for one member of a JSON body that decoded but breaks a rule.
    public static func invalidField(_ pointer: String, _ detail: String) -> Problem {
        Problem(.invalidField, status: .badRequest, title: "Invalid field", detail: pointer.isEmpty ? detail : "\(pointer): \(detail)",
                errors: [BodyError(pointer: pointer, feature: nil, detail: detail)])
    }
}
