"""A saved TorchScript archive made small enough to commit: its tensor records zeroed (ftax
reads only their dims and dtypes) and the archive deflated. Stdlib only, so that scripts
that keep traces run where torch is not installed.

    from trace_archive import zero_and_deflate
    zero_and_deflate("resnet50.fp16.pt")   # rewritten in place
"""
import io
import zipfile


def zero_and_deflate(path):
    """Rewrites a saved TorchScript archive with every tensor record zeroed and without the
    debug pickles (source ranges for error messages, which loading does not need), deflated."""
    src = zipfile.ZipFile(path)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename.endswith(".debug_pkl"):
                continue
            data = src.read(info.filename)
            if "/data/" in info.filename and not info.filename.endswith(".pkl"):
                data = bytes(len(data))
            dst.writestr(info.filename, data)
    src.close()
    with open(path, "wb") as f:
        f.write(buf.getvalue())
